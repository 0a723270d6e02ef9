package picture

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"sort"
	"sync"

	"golang.org/x/image/vector"
)

// canvas is an opaque RGBA picture with the few drawing operations the renderers need. Shapes
// are anti-aliased by the x/image vector rasterizer.
type canvas struct {
	img *image.RGBA
	z   vector.Rasterizer
	p   path
}

func newCanvas(w, h int, bg color.RGBA) *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
	draw.Draw(c.img, c.img.Rect, image.NewUniform(bg), image.Point{}, draw.Src)
	return c
}

// png encodes the picture as an 8-bit paletted PNG: pictures are flat colours with anti-aliased
// edges, so a palette loses nothing visible, and the file is less than half the size of an RGB
// one and quicker to compress. The fastest compression level costs only a few percent in size.
func (c *canvas) png() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(64 << 10)
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: encoderPool{}}
	if err := enc.Encode(&buf, quantize(c.img)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encoderPool lets concurrent renders share the PNG encoders' buffers.
type encoderPool struct{}

var encoderBuffers sync.Pool

func (encoderPool) Get() *png.EncoderBuffer {
	b, _ := encoderBuffers.Get().(*png.EncoderBuffer)
	return b
}

func (encoderPool) Put(b *png.EncoderBuffer) { encoderBuffers.Put(b) }

// quantBits is how many top bits per channel tell colours apart when building the palette.
const quantBits = 6

// quantTables are the scratch tables of quantize, indexed by a colour's key: how often the key
// occurs, then which palette entry it maps to.
type quantTables struct {
	count [1 << (3 * quantBits)]uint32
	keys  []uint32
	reps  []color.RGBA
}

var quantPool = sync.Pool{New: func() any { return new(quantTables) }}

func colorKey(p []uint8) uint32 {
	return uint32(p[0]>>(8-quantBits))<<(2*quantBits) | uint32(p[1]>>(8-quantBits))<<quantBits |
		uint32(p[2]>>(8-quantBits))
}

// quantize maps an opaque RGBA picture to at most 256 colours. Colours are grouped by their top
// six bits per channel; when there are more than 256 groups, the 256 most frequent become the
// palette and every other group takes its nearest palette colour. Only anti-aliased edge pixels
// ever move, and by little.
func quantize(img *image.RGBA) *image.Paletted {
	q := quantPool.Get().(*quantTables)
	defer quantPool.Put(q)
	q.keys, q.reps = q.keys[:0], q.reps[:0]
	r := img.Rect
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			k := colorKey(row[i:])
			if q.count[k] == 0 {
				q.keys = append(q.keys, k)
				q.reps = append(q.reps, color.RGBA{row[i], row[i+1], row[i+2], 255})
			}
			q.count[k]++
		}
	}
	// Order the keys by frequency; the representative colours follow their keys.
	order := make([]int, len(q.keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return q.count[q.keys[order[i]]] > q.count[q.keys[order[j]]] })
	n := min(len(order), 256)
	pal := make(color.Palette, n)
	for i, o := range order[:n] {
		pal[i] = q.reps[o]
	}
	// From here on count holds each key's palette index.
	for i, o := range order[:n] {
		q.count[q.keys[o]] = uint32(i)
	}
	for _, o := range order[n:] {
		c := q.reps[o]
		best, bestD := 0, math.MaxInt
		for i, p := range pal[:n] {
			v := p.(color.RGBA)
			dr, dg, db := int(c.R)-int(v.R), int(c.G)-int(v.G), int(c.B)-int(v.B)
			if d := 3*dr*dr + 4*dg*dg + 2*db*db; d < bestD {
				best, bestD = i, d
			}
		}
		q.count[q.keys[o]] = uint32(best)
	}
	out := image.NewPaletted(r, pal)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		dst := out.Pix[out.PixOffset(r.Min.X, y):]
		for i := 0; i < len(row); i += 4 {
			dst[i>>2] = uint8(q.count[colorKey(row[i:])])
		}
	}
	// Leave the table zeroed for the next picture.
	for _, k := range q.keys {
		q.count[k] = 0
	}
	return out
}

// pathOp is one step of a path in pixel coordinates.
type pathOp struct {
	op  uint8 // 0 move, 1 line, 2 cubic
	pts [6]float32
}

// path collects a shape before it is filled.
type path struct{ ops []pathOp }

func (p *path) reset()              { p.ops = p.ops[:0] }
func (p *path) moveTo(x, y float32) { p.ops = append(p.ops, pathOp{op: 0, pts: [6]float32{x, y}}) }
func (p *path) lineTo(x, y float32) { p.ops = append(p.ops, pathOp{op: 1, pts: [6]float32{x, y}}) }
func (p *path) cubeTo(ax, ay, bx, by, x, y float32) {
	p.ops = append(p.ops, pathOp{op: 2, pts: [6]float32{ax, ay, bx, by, x, y}})
}

// kappa places cubic control points for a quarter circle.
const kappa = 0.5522848

// arc adds a quarter circle around (cx, cy) of radius r from angle a0 to a0±90° (degrees, y down).
func (p *path) arc(cx, cy, r float32, a0, a1 float64) {
	s0, c0 := math.Sincos(a0 * math.Pi / 180)
	s1, c1 := math.Sincos(a1 * math.Pi / 180)
	x0, y0 := cx+r*float32(c0), cy+r*float32(s0)
	x1, y1 := cx+r*float32(c1), cy+r*float32(s1)
	k := float32(kappa)
	if a1 < a0 {
		k = -k
	}
	// Tangent at angle a is (-sin a, cos a) for increasing angles.
	p.cubeTo(x0-k*r*float32(s0), y0+k*r*float32(c0), x1+k*r*float32(s1), y1-k*r*float32(c1), x1, y1)
}

// roundRect adds a rounded rectangle, clockwise on screen, or anticlockwise when rev is set (to
// cut a hole).
func (p *path) roundRect(x0, y0, x1, y1, r float32, rev bool) {
	r = max(0, min(r, (x1-x0)/2, (y1-y0)/2))
	if !rev {
		p.moveTo(x0+r, y0)
		p.lineTo(x1-r, y0)
		p.arc(x1-r, y0+r, r, -90, 0)
		p.lineTo(x1, y1-r)
		p.arc(x1-r, y1-r, r, 0, 90)
		p.lineTo(x0+r, y1)
		p.arc(x0+r, y1-r, r, 90, 180)
		p.lineTo(x0, y0+r)
		p.arc(x0+r, y0+r, r, 180, 270)
		return
	}
	p.moveTo(x0+r, y0)
	p.arc(x0+r, y0+r, r, 270, 180)
	p.lineTo(x0, y1-r)
	p.arc(x0+r, y1-r, r, 180, 90)
	p.lineTo(x1-r, y1)
	p.arc(x1-r, y1-r, r, 90, 0)
	p.lineTo(x1, y0+r)
	p.arc(x1-r, y0+r, r, 0, -90)
	p.lineTo(x0+r, y0)
}

// fill paints the collected path with col and clears it.
func (c *canvas) fill(col color.Color) {
	defer c.p.reset()
	if len(c.p.ops) == 0 {
		return
	}
	x0, y0 := float32(math.Inf(1)), float32(math.Inf(1))
	x1, y1 := float32(math.Inf(-1)), float32(math.Inf(-1))
	for _, o := range c.p.ops {
		n := 2
		if o.op == 2 {
			n = 6
		}
		for i := 0; i < n; i += 2 {
			x0, x1 = min(x0, o.pts[i]), max(x1, o.pts[i])
			y0, y1 = min(y0, o.pts[i+1]), max(y1, o.pts[i+1])
		}
	}
	r := image.Rect(int(math.Floor(float64(x0))), int(math.Floor(float64(y0))),
		int(math.Ceil(float64(x1))), int(math.Ceil(float64(y1)))).Intersect(c.img.Rect)
	if r.Empty() {
		return
	}
	ox, oy := float32(r.Min.X), float32(r.Min.Y)
	c.z.Reset(r.Dx(), r.Dy())
	started := false
	for _, o := range c.p.ops {
		q := o.pts
		switch o.op {
		case 0:
			if started {
				c.z.ClosePath()
			}
			c.z.MoveTo(q[0]-ox, q[1]-oy)
			started = true
		case 1:
			c.z.LineTo(q[0]-ox, q[1]-oy)
		case 2:
			c.z.CubeTo(q[0]-ox, q[1]-oy, q[2]-ox, q[3]-oy, q[4]-ox, q[5]-oy)
		}
	}
	c.z.ClosePath()
	c.z.Draw(c.img, r, image.NewUniform(col), image.Point{})
}

// rect fills an axis-aligned rectangle with exact pixel edges.
func (c *canvas) rect(x0, y0, x1, y1 int, col color.Color) {
	r := image.Rect(x0, y0, x1, y1).Intersect(c.img.Rect)
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Over)
}

// roundRect fills a rounded rectangle. A large one on whole pixels is filled as plain rectangles
// with only its four corners rasterized, which is several times quicker for the table's felt.
func (c *canvas) roundRect(x0, y0, x1, y1, r float32, col color.Color) {
	r = max(0, min(r, (x1-x0)/2, (y1-y0)/2))
	whole := func(v float32) bool { return v == float32(math.Trunc(float64(v))) }
	if (x1-x0)*(y1-y0) < 40000 || !whole(x0) || !whole(y0) || !whole(x1) || !whole(y1) {
		c.p.roundRect(x0, y0, x1, y1, r, false)
		c.fill(col)
		return
	}
	R := float32(math.Ceil(float64(r)))
	ix0, iy0, ix1, iy1, iR := int(x0), int(y0), int(x1), int(y1), int(R)
	c.rect(ix0+iR, iy0, ix1-iR, iy1, col)
	c.rect(ix0, iy0+iR, ix0+iR, iy1-iR, col)
	c.rect(ix1-iR, iy0+iR, ix1, iy1-iR, col)
	if r == 0 {
		return
	}
	// Each corner: the square R×R cut by the quarter circle.
	p := &c.p
	p.moveTo(x0+R, y0+R)
	p.lineTo(x0, y0+R)
	p.lineTo(x0, y0+r)
	p.arc(x0+r, y0+r, r, 180, 270)
	p.lineTo(x0+R, y0)
	c.fill(col)
	p.moveTo(x1-R, y0+R)
	p.lineTo(x1-R, y0)
	p.lineTo(x1-r, y0)
	p.arc(x1-r, y0+r, r, -90, 0)
	p.lineTo(x1, y0+R)
	c.fill(col)
	p.moveTo(x1-R, y1-R)
	p.lineTo(x1, y1-R)
	p.lineTo(x1, y1-r)
	p.arc(x1-r, y1-r, r, 0, 90)
	p.lineTo(x1-R, y1)
	c.fill(col)
	p.moveTo(x0+R, y1-R)
	p.lineTo(x0+R, y1)
	p.lineTo(x0+r, y1)
	p.arc(x0+r, y1-r, r, 90, 180)
	p.lineTo(x0, y1-R)
	c.fill(col)
}

// ring strokes the outline of a rounded rectangle with width w inside its bounds.
func (c *canvas) ring(x0, y0, x1, y1, r, w float32, col color.Color) {
	c.p.roundRect(x0, y0, x1, y1, r, false)
	c.p.roundRect(x0+w, y0+w, x1-w, y1-w, max(0, r-w), true)
	c.fill(col)
}

// circle fills a disc.
func (c *canvas) circle(cx, cy, r float32, col color.Color) {
	c.p.roundRect(cx-r, cy-r, cx+r, cy+r, r, false)
	c.fill(col)
}

// line draws a straight stroke of width w with round ends.
func (c *canvas) line(x0, y0, x1, y1, w float32, col color.Color) {
	dx, dy := x1-x0, y1-y0
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l == 0 {
		c.circle(x0, y0, w/2, col)
		return
	}
	h := w / 2
	nx, ny := -dy/l*h, dx/l*h // the normal, half a width long
	ux, uy := dx/l*h, dy/l*h  // along the line, half a width long
	k := float32(kappa)
	p := &c.p
	p.moveTo(x0+nx, y0+ny)
	p.lineTo(x1+nx, y1+ny)
	p.cubeTo(x1+nx+k*ux, y1+ny+k*uy, x1+ux+k*nx, y1+uy+k*ny, x1+ux, y1+uy)
	p.cubeTo(x1+ux-k*nx, y1+uy-k*ny, x1-nx+k*ux, y1-ny+k*uy, x1-nx, y1-ny)
	p.lineTo(x0-nx, y0-ny)
	p.cubeTo(x0-nx-k*ux, y0-ny-k*uy, x0-ux-k*nx, y0-uy-k*ny, x0-ux, y0-uy)
	p.cubeTo(x0-ux+k*nx, y0-uy+k*ny, x0+nx-k*ux, y0+ny-k*uy, x0+nx, y0+ny)
	c.fill(col)
}

// mix blends a over b by t (0 gives b, 1 gives a).
func mix(a, b color.RGBA, t float64) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*t + float64(y)*(1-t))) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 255}
}
