package picture

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file reads the few TrueType tables the renderer needs from the embedded Go fonts: the
// character map, advance widths, vertical metrics and glyph outlines. The x/image sfnt package
// would do the same, but it pulls in golang.org/x/text, which this module does not require; the
// Go fonts are plain TrueType (quadratic outlines, cmap format 4, no kerning tables), so a small
// reader suffices.

var errFont = errors.New("picture: malformed font")

// ttFont is a parsed TrueType font. It is read-only after parsing and safe for concurrent use.
type ttFont struct {
	name       string
	data       []byte
	unitsPerEm float32
	ascent     float32 // font units, positive up
	descent    float32 // font units, negative
	capHeight  float32
	longLoca   bool
	numGlyphs  int
	numHMetric int
	hmtx, loca []byte
	glyf       []byte
	cmap       map[rune]uint16
}

// segOp is a path operation in font units, y pointing up.
type segOp uint8

const (
	opMove segOp = iota
	opLine
	opQuad
)

type seg struct {
	op     segOp
	x0, y0 float32 // the point (move, line) or the control point (quad)
	x1, y1 float32 // the end point of a quad
}

func parseTTF(name string, data []byte) (*ttFont, error) {
	f := &ttFont{name: name, data: data}
	if len(data) < 12 {
		return nil, errFont
	}
	tables := map[string][]byte{}
	n := int(be16(data, 4))
	for i := range n {
		rec := 12 + 16*i
		if rec+16 > len(data) {
			return nil, errFont
		}
		off, ln := int(be32(data, rec+8)), int(be32(data, rec+12))
		if off < 0 || ln < 0 || off+ln > len(data) {
			return nil, errFont
		}
		tables[string(data[rec:rec+4])] = data[off : off+ln]
	}
	for _, t := range []string{"head", "hhea", "hmtx", "maxp", "loca", "glyf", "cmap"} {
		if tables[t] == nil {
			return nil, fmt.Errorf("%w: %s has no %s table", errFont, name, t)
		}
	}
	head, hhea, maxp := tables["head"], tables["hhea"], tables["maxp"]
	if len(head) < 54 || len(hhea) < 36 || len(maxp) < 6 {
		return nil, errFont
	}
	f.unitsPerEm = float32(be16(head, 18))
	f.longLoca = be16(head, 50) != 0
	f.ascent = float32(int16(be16(hhea, 4)))
	f.descent = float32(int16(be16(hhea, 6)))
	f.numHMetric = int(be16(hhea, 34))
	f.numGlyphs = int(be16(maxp, 4))
	f.hmtx, f.loca, f.glyf = tables["hmtx"], tables["loca"], tables["glyf"]
	if f.unitsPerEm == 0 || f.numHMetric == 0 || len(f.hmtx) < 4*f.numHMetric {
		return nil, errFont
	}
	f.capHeight = 0.7 * f.unitsPerEm
	if os2 := tables["OS/2"]; len(os2) >= 90 && be16(os2, 0) >= 2 {
		f.capHeight = float32(int16(be16(os2, 88)))
	}
	var err error
	if f.cmap, err = parseCmap(tables["cmap"]); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, name)
	}
	return f, nil
}

// parseCmap reads the Unicode BMP subtable (format 4) into a map.
func parseCmap(t []byte) (map[rune]uint16, error) {
	if len(t) < 4 {
		return nil, errFont
	}
	n := int(be16(t, 2))
	for i := range n {
		rec := 4 + 8*i
		if rec+8 > len(t) {
			return nil, errFont
		}
		pid, eid, off := be16(t, rec), be16(t, rec+2), int(be32(t, rec+4))
		if !(pid == 3 && eid == 1 || pid == 0) || off+4 > len(t) || be16(t, off) != 4 {
			continue
		}
		return parseCmap4(t[off:])
	}
	return nil, fmt.Errorf("%w: no Unicode character map", errFont)
}

func parseCmap4(t []byte) (map[rune]uint16, error) {
	if len(t) < 14 {
		return nil, errFont
	}
	segs := int(be16(t, 6)) / 2
	ends, starts, deltas, ranges := 14, 16+2*segs, 16+4*segs, 16+6*segs
	if ranges+2*segs > len(t) {
		return nil, errFont
	}
	m := make(map[rune]uint16, 1024)
	for i := range segs {
		end, start := int(be16(t, ends+2*i)), int(be16(t, starts+2*i))
		delta, ro := be16(t, deltas+2*i), int(be16(t, ranges+2*i))
		for c := start; c <= end && c != 0xffff; c++ {
			var g uint16
			if ro == 0 {
				g = uint16(c) + delta
			} else {
				at := ranges + 2*i + ro + 2*(c-start)
				if at+2 > len(t) {
					return nil, errFont
				}
				if g = be16(t, at); g != 0 {
					g += delta
				}
			}
			if g != 0 {
				m[rune(c)] = g
			}
		}
	}
	return m, nil
}

// glyph gives the glyph index of r, and false when the font has no glyph for it.
func (f *ttFont) glyph(r rune) (uint16, bool) {
	g, ok := f.cmap[r]
	return g, ok && int(g) < f.numGlyphs
}

// advance is the glyph's advance width in font units.
func (f *ttFont) advance(g uint16) float32 {
	i := min(int(g), f.numHMetric-1)
	return float32(be16(f.hmtx, 4*i))
}

// glyphData is the glyf entry of glyph g (empty for blank glyphs such as the space).
func (f *ttFont) glyphData(g uint16) ([]byte, error) {
	i := int(g)
	var a, b int
	if f.longLoca {
		if 4*i+8 > len(f.loca) {
			return nil, errFont
		}
		a, b = int(be32(f.loca, 4*i)), int(be32(f.loca, 4*i+4))
	} else {
		if 2*i+4 > len(f.loca) {
			return nil, errFont
		}
		a, b = 2*int(be16(f.loca, 2*i)), 2*int(be16(f.loca, 2*i+2))
	}
	if a > b || b > len(f.glyf) {
		return nil, errFont
	}
	return f.glyf[a:b], nil
}

// outline appends glyph g's contours to path, transformed by the matrix (xx xy yx yy) and the
// offset (dx, dy), in font units. Composite glyphs recurse up to a small depth.
func (f *ttFont) outline(path []seg, g uint16, m [6]float32, depth int) ([]seg, error) {
	if depth > 4 {
		return path, errFont
	}
	d, err := f.glyphData(g)
	if err != nil || len(d) == 0 {
		return path, err
	}
	if len(d) < 10 {
		return path, errFont
	}
	nc := int(int16(be16(d, 0)))
	if nc < 0 {
		return f.composite(path, d[10:], m, depth)
	}
	return simpleGlyph(path, d, nc, m)
}

func simpleGlyph(path []seg, d []byte, nc int, m [6]float32) ([]seg, error) {
	p := 10
	if p+2*nc+2 > len(d) {
		return path, errFont
	}
	ends := make([]int, nc)
	for i := range ends {
		ends[i] = int(be16(d, p))
		p += 2
	}
	if nc == 0 {
		return path, nil
	}
	np := ends[nc-1] + 1
	p += 2 + int(be16(d, p)) // skip instructions
	flags := make([]byte, np)
	for i := 0; i < np; {
		if p >= len(d) {
			return path, errFont
		}
		fl := d[p]
		p++
		flags[i] = fl
		i++
		if fl&8 != 0 {
			if p >= len(d) {
				return path, errFont
			}
			for r := int(d[p]); r > 0 && i < np; r-- {
				flags[i] = fl
				i++
			}
			p++
		}
	}
	xs, ys := make([]float32, np), make([]float32, np)
	var err error
	if p, err = coords(d, p, flags, xs, 2, 16); err != nil {
		return path, err
	}
	if _, err = coords(d, p, flags, ys, 4, 32); err != nil {
		return path, err
	}
	start := 0
	for _, end := range ends {
		if end < start || end >= np {
			return path, errFont
		}
		path = contour(path, flags[start:end+1], xs[start:end+1], ys[start:end+1], m)
		start = end + 1
	}
	return path, nil
}

// coords decodes one axis of a simple glyph's points.
func coords(d []byte, p int, flags []byte, out []float32, short, same byte) (int, error) {
	v := 0
	for i, fl := range flags {
		switch {
		case fl&short != 0:
			if p >= len(d) {
				return p, errFont
			}
			if fl&same != 0 {
				v += int(d[p])
			} else {
				v -= int(d[p])
			}
			p++
		case fl&same == 0:
			if p+2 > len(d) {
				return p, errFont
			}
			v += int(int16(be16(d, p)))
			p += 2
		}
		out[i] = float32(v)
	}
	return p, nil
}

// contour turns one closed contour of on- and off-curve points into path segments. Two
// off-curve points in a row imply an on-curve point halfway between them.
func contour(path []seg, flags []byte, xs, ys []float32, m [6]float32) []seg {
	n := len(flags)
	if n == 0 {
		return path
	}
	tx := func(x, y float32) (float32, float32) { return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5] }
	on := func(i int) bool { return flags[i%n]&1 != 0 }
	// Start on the curve: at the first on-curve point, or between the last and the first point
	// when every point is off the curve.
	from, count := 0, n
	sx, sy := (xs[0]+xs[n-1])/2, (ys[0]+ys[n-1])/2
	for i := range n {
		if on(i) {
			from, count, sx, sy = i+1, n-1, xs[i], ys[i]
			break
		}
	}
	x, y := tx(sx, sy)
	path = append(path, seg{op: opMove, x0: x, y0: y})
	var cx, cy float32
	haveCtl := false
	emit := func(x, y float32) {
		ex, ey := tx(x, y)
		if haveCtl {
			qx, qy := tx(cx, cy)
			path = append(path, seg{op: opQuad, x0: qx, y0: qy, x1: ex, y1: ey})
		} else {
			path = append(path, seg{op: opLine, x0: ex, y0: ey})
		}
		haveCtl = false
	}
	for k := range count {
		i := (from + k) % n
		if on(i) {
			emit(xs[i], ys[i])
			continue
		}
		if haveCtl {
			emit((cx+xs[i])/2, (cy+ys[i])/2)
		}
		cx, cy, haveCtl = xs[i], ys[i], true
	}
	emit(sx, sy)
	return path
}

func (f *ttFont) composite(path []seg, d []byte, m [6]float32, depth int) ([]seg, error) {
	const (
		argWords  = 0x0001
		argsXY    = 0x0002
		haveScale = 0x0008
		more      = 0x0020
		xyScale   = 0x0040
		twoByTwo  = 0x0080
	)
	p := 0
	for {
		if p+4 > len(d) {
			return path, errFont
		}
		fl, g := be16(d, p), be16(d, p+2)
		p += 4
		var dx, dy float32
		if fl&argWords != 0 {
			if p+4 > len(d) {
				return path, errFont
			}
			dx, dy = float32(int16(be16(d, p))), float32(int16(be16(d, p+2)))
			p += 4
		} else {
			if p+2 > len(d) {
				return path, errFont
			}
			dx, dy = float32(int8(d[p])), float32(int8(d[p+1]))
			p += 2
		}
		if fl&argsXY == 0 {
			dx, dy = 0, 0 // point matching: not used by the Go fonts
		}
		c := [4]float32{1, 0, 0, 1}
		f2 := func() float32 { v := float32(int16(be16(d, p))) / 16384; p += 2; return v }
		switch {
		case fl&haveScale != 0 && p+2 <= len(d):
			s := f2()
			c = [4]float32{s, 0, 0, s}
		case fl&xyScale != 0 && p+4 <= len(d):
			c[0] = f2()
			c[3] = f2()
		case fl&twoByTwo != 0 && p+8 <= len(d):
			c[0], c[1], c[2], c[3] = f2(), f2(), f2(), f2()
		}
		// Compose: the component's matrix first, then the parent's.
		cm := [6]float32{
			m[0]*c[0] + m[2]*c[1], m[1]*c[0] + m[3]*c[1],
			m[0]*c[2] + m[2]*c[3], m[1]*c[2] + m[3]*c[3],
			m[0]*dx + m[2]*dy + m[4], m[1]*dx + m[3]*dy + m[5],
		}
		var err error
		if path, err = f.outline(path, g, cm, depth+1); err != nil {
			return path, err
		}
		if fl&more == 0 {
			return path, nil
		}
	}
}

func be16(b []byte, i int) uint16 { return binary.BigEndian.Uint16(b[i:]) }
func be32(b []byte, i int) uint32 { return binary.BigEndian.Uint32(b[i:]) }
