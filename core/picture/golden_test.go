package picture

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

var update = flag.Bool("update", false, "rewrite the golden pictures under testdata/")

// Tolerances for comparing a picture with its golden: anti-aliasing may differ a little between
// machines (float rounding in the rasterizer), so a pixel may differ by up to pixelTolerance in a
// channel, and at most badShare of the pixels may differ by more.
const (
	pixelTolerance = 32
	badShare       = 0.0001
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
	ia, err := decodeRGBA(a)
	if err != nil {
		return err
	}
	ib, err := decodeRGBA(b)
	if err != nil {
		return err
	}
	if ia.Bounds() != ib.Bounds() {
		return fmt.Errorf("size %v, golden %v", ia.Bounds().Size(), ib.Bounds().Size())
	}
	bad, worst := 0, 0
	for i := 0; i < len(ia.Pix); i += 4 {
		d := 0
		for k := range 4 {
			v := int(ia.Pix[i+k]) - int(ib.Pix[i+k])
			d = max(d, v, -v)
		}
		if d > pixelTolerance {
			bad++
			worst = max(worst, d)
		}
	}
	r := ia.Bounds()
	if limit := int(badShare * float64(r.Dx()*r.Dy())); bad > limit {
		return fmt.Errorf("%d pixels differ (at most %d may), by up to %d", bad, limit, worst)
	}
	return nil
}

// decodeRGBA decodes a PNG into non-premultiplied RGBA bytes.
func decodeRGBA(p []byte) (*image.NRGBA, error) {
	img, err := png.Decode(bytes.NewReader(p))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	out := image.NewNRGBA(r)
	if pi, ok := img.(*image.Paletted); ok {
		pal := make([]color.NRGBA, len(pi.Palette))
		for i, c := range pi.Palette {
			pal[i] = color.NRGBAModel.Convert(c).(color.NRGBA)
		}
		for i, ix := range pi.Pix {
			c := pal[ix]
			copy(out.Pix[4*i:], []uint8{c.R, c.G, c.B, c.A})
		}
		return out, nil
	}
	draw.Draw(out, r, img, r.Min, draw.Src)
	return out, nil
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

// TestSamePicture checks the comparison itself: a picture matches itself and not the other
// theme, nor one with a few stripes more.
func TestSamePicture(t *testing.T) {
	light, err := Board(midMatch(), Light)
	if err != nil {
		t.Fatal(err)
	}
	dark, err := Board(midMatch(), Dark)
	if err != nil {
		t.Fatal(err)
	}
	in := midMatch()
	in.Board.Crossed[core.TeamB]++
	crossed, err := Board(in, Light)
	if err != nil {
		t.Fatal(err)
	}
	if err := samePicture(light, light); err != nil {
		t.Errorf("a picture differs from itself: %v", err)
	}
	if samePicture(light, dark) == nil {
		t.Error("light and dark compare equal")
	}
	if samePicture(light, crossed) == nil {
		t.Error("one more crossed-out stripe went unnoticed")
	}
}

func TestStandingsGolden(t *testing.T) {
	season := StandingsInput{Title: "Tabelle November 2026 in Café Konter", Labels: german, Rows: []StandingRow{
		{Name: "Anna", Rating: "14,2", Won: 9, Played: 14},
		{Name: "Bartholomäus von Esch-sur-Alzette und Umgebung", Rating: "11,0", Won: 8, Played: 15},
		{Name: "Zoë 🎴", Rating: "9,7", Won: 6, Played: 13},
		{Name: "Dan", Rating: "−0,4", Won: 5, Played: 12},
		{Name: "王小明", Rating: "3,1", Won: 3, Played: 4, Provisional: true},
		{Name: "Eve", Rating: "−2,5", Won: 1, Played: 2, Provisional: true},
	}}
	many := StandingsInput{Title: "All-time table in a very busy chat"}
	for i := range 25 {
		many.Rows = append(many.Rows, StandingRow{Name: "Player " + string(rune('A'+i)), Rating: "1.0", Won: 25 - i, Played: 30})
	}
	for _, tc := range []struct {
		name string
		in   StandingsInput
	}{
		{"standings-season", season},
		{"standings-empty", StandingsInput{Labels: french}},
		{"standings-many", many},
	} {
		for _, th := range []Theme{Light, Dark} {
			t.Run(tc.name+"-"+th.String(), func(t *testing.T) {
				got, err := Standings(tc.in, th)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, tc.name+"-"+th.String(), got)
			})
		}
	}
	if alt := season.AltText(); !strings.HasPrefix(alt, "Tabelle November 2026 in Café Konter. 1. Anna, Wertung 14,2, Gewonnen 9 / Gespielt 14.") ||
		!strings.Contains(alt, "Eve, Wertung −2,5, Gewonnen 1 / Gespielt 2 (vorläufig).") {
		t.Errorf("alt text: %q", alt)
	}
	if alt := (StandingsInput{Labels: french}).AltText(); alt != "Classement. Aucune partie finie." {
		t.Errorf("empty alt text: %q", alt)
	}
}
