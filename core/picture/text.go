package picture

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// face is a typeface at a pixel size (the em height).
type face struct {
	f    *ttFont
	size float32
}

func (fc face) scale() float32 { return fc.size / fc.f.unitsPerEm }

// capHeight is the height of capital letters, in pixels: text is centred on it.
func (fc face) capHeight() float32 { return fc.f.capHeight * fc.scale() }

// A glyph run item: a glyph of the font, or a replacement box for a character the font lacks.
type item struct {
	g       sfnt.GlyphIndex
	missing bool
	adv     float32
}

// ignorable reports characters that take no space and need no glyph: controls, format
// characters (zero-width joiners, direction marks), variation selectors and emoji modifiers.
func ignorable(r rune) bool {
	switch {
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, r >= 0x1f3fb && r <= 0x1f3ff:
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// shape turns s into glyph items: no kerning (the Go fonts carry no kerning tables), one
// replacement box per character the font lacks, and combining marks the font lacks dropped.
func (fc face) shape(s string) []item {
	out := make([]item, 0, len(s))
	sc := fc.scale()
	for _, r := range s {
		if ignorable(r) {
			continue
		}
		if g, ok := fc.f.glyph(r); ok {
			out = append(out, item{g: g, adv: fc.f.advance(g) * sc})
			continue
		}
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
			continue
		}
		out = append(out, item{missing: true, adv: boxAdvance * fc.size})
	}
	return out
}

// boxAdvance is the width of the replacement box, in ems.
const boxAdvance = 0.62

// width is the advance width of s in pixels.
func (fc face) width(s string) float32 {
	w := float32(0)
	for _, it := range fc.shape(s) {
		w += it.adv
	}
	return w
}

// ellipsize shortens s with "…" until it fits in maxw pixels. Characters are measured one by one
// (the fonts have no kerning), so a long string costs no more than its length.
func (fc face) ellipsize(s string, maxw float32) string {
	if fc.width(s) <= maxw {
		return s
	}
	room := maxw - fc.width("…")
	w, end := float32(0), 0
	for i, r := range s {
		w += fc.width(string(r))
		if w > room {
			break
		}
		end = i + utf8.RuneLen(r)
	}
	return s[:end] + "…"
}

// ellipsizeMiddle shortens s to its last tail characters after as much of its start as fits in
// maxw pixels with a "…" between; "" when not even one character of the start fits.
func (fc face) ellipsizeMiddle(s string, maxw float32, tail int) string {
	r := []rune(s)
	if tail >= len(r)-1 {
		return ""
	}
	end := string(r[len(r)-tail:])
	room := maxw - fc.width("…"+end)
	w, head := float32(0), 0
	for _, c := range r[:len(r)-tail] {
		w += fc.width(string(c))
		if w > room {
			break
		}
		head++
	}
	if head == 0 {
		return ""
	}
	return strings.TrimRight(string(r[:head]), " ") + "…" + end
}

// fit gives s in the largest of the sizes (largest first) at which it fits in maxw pixels, or
// shortened with "…" at the smallest.
func fit(f *ttFont, s string, maxw float32, sizes ...float32) (face, string) {
	for _, size := range sizes {
		if fc := (face{f, size}); fc.width(s) <= maxw {
			return fc, s
		}
	}
	fc := face{f, sizes[len(sizes)-1]}
	return fc, fc.ellipsize(s, maxw)
}

// glyphKey identifies a rasterized glyph: font, size in quarter pixels, glyph, and the horizontal
// sub-pixel offset in quarter pixels.
type glyphKey struct {
	f    *ttFont
	size int32
	g    sfnt.GlyphIndex
	sub  uint8
}

// glyphMask is a rasterized glyph; off is the mask's top-left corner relative to the dot
// (integer pen position on the baseline).
type glyphMask struct {
	mask *image.Alpha
	off  image.Point
}

// The glyph cache is shared by all renders; its masks are never changed after they are made.
// It stops growing at maxCachedGlyphs so that names in exotic scripts cannot grow it forever.
var glyphCache struct {
	sync.RWMutex
	m map[glyphKey]*glyphMask
}

const maxCachedGlyphs = 4096

func (fc face) mask(g sfnt.GlyphIndex, sub uint8) *glyphMask {
	k := glyphKey{f: fc.f, size: int32(math.Round(float64(fc.size * 4))), g: g, sub: sub}
	glyphCache.RLock()
	gm, ok := glyphCache.m[k]
	glyphCache.RUnlock()
	if ok {
		return gm
	}
	gm = fc.rasterize(g, float32(sub)/4)
	glyphCache.Lock()
	if glyphCache.m == nil {
		glyphCache.m = make(map[glyphKey]*glyphMask)
	}
	if len(glyphCache.m) < maxCachedGlyphs {
		glyphCache.m[k] = gm
	}
	glyphCache.Unlock()
	return gm
}

// rasterize draws glyph g with its origin at (dx, 0) into a new mask; a glyph the font cannot
// load gives an empty mask.
func (fc face) rasterize(g sfnt.GlyphIndex, dx float32) *glyphMask {
	empty := &glyphMask{mask: image.NewAlpha(image.Rectangle{})}
	buf := sfntBuffers.Get().(*sfnt.Buffer)
	defer sfntBuffers.Put(buf)
	segs, err := fc.f.f.LoadGlyph(buf, g, fixed.Int26_6(math.Round(float64(fc.size)*64)), nil)
	if err != nil || len(segs) == 0 {
		return empty
	}
	bounds := segs.Bounds()
	fx := fixed.Int26_6(math.Round(float64(dx) * 64))
	r := image.Rect((bounds.Min.X + fx).Floor(), bounds.Min.Y.Floor(), (bounds.Max.X + fx).Ceil(), bounds.Max.Y.Ceil())
	if r.Empty() {
		return empty
	}
	// Shift the outline so that the mask's top-left corner is (0, 0).
	ox, oy := float32(fx)/64-float32(r.Min.X), -float32(r.Min.Y)
	pt := func(p fixed.Point26_6) (float32, float32) { return float32(p.X)/64 + ox, float32(p.Y)/64 + oy }
	var z vector.Rasterizer
	z.Reset(r.Dx(), r.Dy())
	for _, s := range segs {
		switch s.Op {
		case sfnt.SegmentOpMoveTo:
			z.MoveTo(pt(s.Args[0]))
		case sfnt.SegmentOpLineTo:
			z.LineTo(pt(s.Args[0]))
		case sfnt.SegmentOpQuadTo:
			x1, y1 := pt(s.Args[0])
			x2, y2 := pt(s.Args[1])
			z.QuadTo(x1, y1, x2, y2)
		case sfnt.SegmentOpCubeTo:
			x1, y1 := pt(s.Args[0])
			x2, y2 := pt(s.Args[1])
			x3, y3 := pt(s.Args[2])
			z.CubeTo(x1, y1, x2, y2, x3, y3)
		}
	}
	m := image.NewAlpha(image.Rect(0, 0, r.Dx(), r.Dy()))
	z.DrawOp = draw.Src
	z.Draw(m, m.Bounds(), image.Opaque, image.Point{})
	return &glyphMask{mask: m, off: r.Min}
}

// align is how text sits on its anchor point.
type align uint8

const (
	left align = iota
	center
	right
)

// text draws s with its baseline at y, anchored at x, and returns the advance width.
func (c *canvas) text(fc face, x, y float32, s string, col color.Color, a align) float32 {
	items := fc.shape(s)
	w := float32(0)
	for _, it := range items {
		w += it.adv
	}
	switch a {
	case center:
		x -= w / 2
	case right:
		x -= w
	}
	src := image.NewUniform(col)
	by := int(math.Round(float64(y)))
	for _, it := range items {
		if it.missing {
			c.replacement(fc, x, float32(by), it.adv, col)
			x += it.adv
			continue
		}
		fx := math.Floor(float64(x))
		sub := uint8(math.Round((float64(x) - fx) * 4))
		ix := int(fx)
		if sub == 4 {
			sub, ix = 0, ix+1
		}
		gm := fc.mask(it.g, sub)
		if !gm.mask.Rect.Empty() {
			dr := gm.mask.Rect.Add(image.Pt(ix, by).Add(gm.off))
			draw.DrawMask(c.img, dr, src, image.Point{}, gm.mask, image.Point{}, draw.Over)
		}
		x += it.adv
	}
	return w
}

// replacement draws the box that stands for a character the font lacks.
func (c *canvas) replacement(fc face, x, y, adv float32, col color.Color) {
	h := fc.capHeight()
	pad := adv * 0.12
	sw := max(1, fc.size/14)
	c.ring(x+pad, y-h, x+adv-pad, y, fc.size/16, sw, col)
}

// readable is a name as the picture can draw it: the emoji and symbols the font lacks left out
// ("Björn 🍺" is "Björn"), each run of letters it lacks written "…" ("Anna 李" is "Anna …"),
// and "" when no letter it has remains ("王小明"), for the caller's fallback (the seat). The
// alt text keeps the name as it is.
func readable(f *ttFont, s string) string {
	var b strings.Builder
	drawn, gap := false, false
	for _, r := range s {
		_, has := f.glyph(r)
		switch {
		case ignorable(r):
		case has:
			if gap {
				b.WriteString("…")
				gap = false
			}
			b.WriteRune(r)
			drawn = drawn || unicode.IsLetter(r) || unicode.IsDigit(r)
		case unicode.IsLetter(r):
			gap = true
		}
	}
	if !drawn {
		return ""
	}
	if gap {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// pngOf encodes a drawn picture.
func pngOf(c *canvas, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return c.png()
}

// fontsFor loads the fonts and makes the names readable in them: what every picture of the
// players does first.
func fontsFor(names *[4]string) ([2]*ttFont, error) {
	fs, err := loadFonts()
	if err != nil {
		return fs, err
	}
	*names = readableNames(fs[regular], *names)
	return fs, nil
}

// readableNames are the seats' names as the picture draws them (see readable).
func readableNames(f *ttFont, names [4]string) [4]string {
	for i, n := range names {
		names[i] = readable(f, n)
	}
	return names
}
