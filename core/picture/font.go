package picture

import (
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// ttFont is one of the embedded Go fonts, parsed once. An sfnt.Font is safe for concurrent use as
// long as each caller brings its own sfnt.Buffer; buffers come from a pool.
type ttFont struct {
	f          *sfnt.Font
	unitsPerEm float32
	ascent     float32 // font units above the baseline
	capHeight  float32 // font units
}

var sfntBuffers = sync.Pool{New: func() any { return new(sfnt.Buffer) }}

func parseFont(src []byte) (*ttFont, error) {
	f, err := sfnt.Parse(src)
	if err != nil {
		return nil, err
	}
	t := &ttFont{f: f, unitsPerEm: float32(f.UnitsPerEm())}
	b := sfntBuffers.Get().(*sfnt.Buffer)
	defer sfntBuffers.Put(b)
	m, err := f.Metrics(b, fixed.I(int(f.UnitsPerEm())), font.HintingNone)
	if err != nil {
		return nil, err
	}
	t.ascent, t.capHeight = float32(m.Ascent)/64, float32(m.CapHeight)/64
	if t.capHeight <= 0 {
		t.capHeight = 0.7 * t.unitsPerEm
	}
	return t, nil
}

// glyph gives the glyph of r, and false when the font has none.
func (f *ttFont) glyph(r rune) (sfnt.GlyphIndex, bool) {
	b := sfntBuffers.Get().(*sfnt.Buffer)
	defer sfntBuffers.Put(b)
	g, err := f.f.GlyphIndex(b, r)
	return g, err == nil && g != 0
}

// advance is the glyph's advance width in font units.
func (f *ttFont) advance(g sfnt.GlyphIndex) float32 {
	b := sfntBuffers.Get().(*sfnt.Buffer)
	defer sfntBuffers.Put(b)
	a, err := f.f.GlyphAdvance(b, g, fixed.I(int(f.unitsPerEm)), font.HintingNone)
	if err != nil {
		return 0
	}
	return float32(a) / 64
}

// The two typefaces the pictures use.
type typeface uint8

const (
	regular typeface = iota
	bold
)

var fonts struct {
	once sync.Once
	f    [2]*ttFont
	err  error
}

// loadFonts parses the embedded Go fonts once.
func loadFonts() ([2]*ttFont, error) {
	fonts.once.Do(func() {
		if fonts.f[regular], fonts.err = parseFont(goregular.TTF); fonts.err != nil {
			return
		}
		fonts.f[bold], fonts.err = parseFont(gobold.TTF)
	})
	return fonts.f, fonts.err
}
