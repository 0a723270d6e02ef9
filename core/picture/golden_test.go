package picture

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

var update = flag.Bool("update", false, "rewrite the golden pictures under testdata/")

// Tolerances for comparing a picture with its golden: anti-aliasing may differ a little between
// machines (float rounding in the rasterizer), so a pixel may differ by up to pixelTolerance in a
// channel, and at most badShare of the pixels may differ by more.
const (
	pixelTolerance = 24
	badShare       = 0.002
)

// golden compares a PNG with testdata/name.png, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".png")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if err := samePicture(got, want); err != nil {
		failed := filepath.Join(t.TempDir(), name+".png")
		_ = os.WriteFile(failed, got, 0o644)
		t.Errorf("%s: %v; the new picture is %s (go test -update rewrites the golden)", name, err, failed)
	}
}

// samePicture decodes two PNGs and compares them pixel by pixel with the tolerances above.
func samePicture(a, b []byte) error {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if ia.Bounds() != ib.Bounds() {
		return fmt.Errorf("size %v, golden %v", ia.Bounds().Size(), ib.Bounds().Size())
	}
	r := ia.Bounds()
	bad, worst := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if d := pixelDiff(ia, ib, x, y); d > pixelTolerance {
				bad++
				worst = max(worst, d)
			}
		}
	}
	if limit := int(badShare * float64(r.Dx()*r.Dy())); bad > limit {
		return fmt.Errorf("%d pixels differ (at most %d may), by up to %d", bad, limit, worst)
	}
	return nil
}

func pixelDiff(a, b image.Image, x, y int) int {
	r1, g1, b1, a1 := a.At(x, y).RGBA()
	r2, g2, b2, a2 := b.At(x, y).RGBA()
	d := 0
	for _, p := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		v := int(p[0]>>8) - int(p[1]>>8)
		d = max(d, v, -v)
	}
	return d
}

func TestBoardGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   BoardInput
	}{
		{"board-empty", BoardInput{Rules: core.DefaultRules(), Names: names, Labels: french}},
		{"board-mid", midMatch()},
		{"board-long", withLabels(longMatch(), luxembourgish)},
	} {
		for _, th := range []Theme{Light, Dark} {
			t.Run(tc.name+"-"+th.String(), func(t *testing.T) {
				got, err := Board(tc.in, th)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, tc.name+"-"+th.String(), got)
			})
		}
	}
}

func TestTableGolden(t *testing.T) {
	anti := tableGame(t, -1).View(core.NoSeat)
	anti.Rules.Direction = core.Anticlockwise
	for _, tc := range []struct {
		name string
		in   TableInput
	}{
		{"table-trick", TableInput{View: tableGame(t, -1).View(core.NoSeat), Names: names}},
		{"table-last-anticlockwise", TableInput{View: anti, Names: names, ShowLastTrick: true, Labels: luxembourgish}},
		{"table-trump", TableInput{View: tableGame(t, 0).View(core.NoSeat), Names: [4]string{"Anna", "", "Zoë 🎴", "王小明"}}},
	} {
		for _, th := range []Theme{Light, Dark} {
			t.Run(tc.name+"-"+th.String(), func(t *testing.T) {
				got, err := Table(tc.in, th)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, tc.name+"-"+th.String(), got)
			})
		}
	}
}

func withLabels(in BoardInput, l Labels) BoardInput {
	in.Labels = l
	return in
}
