package picture

import (
	"errors"
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
)

// ErrBadInput is returned for input a picture cannot show: a stripe board that does not add up,
// or a view that holds a hand.
var ErrBadInput = errors.New("picture: bad input")

// BoardInput is everything the stripe board shows; all of it is public.
type BoardInput struct {
	Rules   core.Rules
	Board   core.Board       // the board now; a zero Start takes Rules.Stripes
	History []core.GameScore // the finished games, oldest first (Match.History)
	Names   [4]string        // the players' names by seat; empty ones become "Seat 1".."Seat 4"
	Labels  Labels
	Winner  *core.Team // the match winner; nil derives it from the board
}

// maxMarks bounds the stripes a board draws (start plus added).
const maxMarks = 200

// maxGameRows is how many lines the games table shows; a longer match shows its latest games.
const maxGameRows = 16

func (in BoardInput) prepare() (BoardInput, error) {
	in.Labels = in.Labels.withDefaults()
	b := &in.Board
	if b.Start == 0 {
		b.Start = in.Rules.Stripes
	}
	switch {
	case b.Start < 1 || b.Start > maxMarks:
		return in, fmt.Errorf("%w: %d starting stripes", ErrBadInput, b.Start)
	case b.Crossed[0] < 0 || b.Crossed[1] < 0 || b.Added[0] < 0 || b.Added[1] < 0:
		return in, fmt.Errorf("%w: negative stripe count", ErrBadInput)
	case b.Start+b.Added[0] > maxMarks || b.Start+b.Added[1] > maxMarks:
		return in, fmt.Errorf("%w: more than %d stripes", ErrBadInput, maxMarks)
	case b.Open(core.TeamA) < 0 || b.Open(core.TeamB) < 0:
		return in, fmt.Errorf("%w: more stripes crossed out than drawn", ErrBadInput)
	}
	if in.Winner == nil {
		if t, over := b.Winner(); over {
			in.Winner = &t
		}
	}
	return in, nil
}

// maxNameRunes bounds the part of a name that is measured and drawn; longer names are shortened
// with "…" anyway.
const maxNameRunes = 64

// name is the seat's name, or "Seat n" (1-based) when it has none.
func name(names [4]string, l Labels, s core.Seat) string {
	if !s.Valid() {
		return "?"
	}
	n := strings.TrimSpace(names[s])
	if r := []rune(n); len(r) > maxNameRunes {
		n = string(r[:maxNameRunes]) + "…"
	}
	if n != "" {
		return n
	}
	return l.Seat + " " + strconv.Itoa(int(s)+1)
}

// teamNames joins the names of team t's two players.
func teamNames(names [4]string, l Labels, t core.Team) string {
	s := t.Seats()
	return name(names, l, s[0]) + " & " + name(names, l, s[1])
}

// signed writes a stripe change as players write it: −3, +2, or 0.
func signed(n int) string {
	switch {
	case n < 0:
		return "−" + strconv.Itoa(-n)
	case n > 0:
		return "+" + strconv.Itoa(n)
	}
	return "0"
}

// callsText joins a game's calls: "Konter", "Konter, Matt".
func callsText(calls []core.Announcement) string {
	parts := make([]string, 0, len(calls))
	for _, a := range calls {
		parts = append(parts, a.Call.Title())
	}
	return strings.Join(parts, ", ")
}

// The board's geometry, in pixels.
const (
	boardW       = 720
	margin       = 20
	panelPad     = 16
	panelBar     = 6
	openColW     = 108
	strokeW      = 6
	strokeH      = 40
	strokePitch  = 17
	groupGap     = 13
	sectionGap   = 30
	stripeLineH  = 56
	headerRowH   = 38
	gameRowH     = 38
	panelTopText = 40 // baseline of the team line inside a panel
	panelStripes = 58 // top of the first stripe line inside a panel
)

// mark is one stripe on the board.
type mark struct {
	x, y    float32 // top-left of the stroke
	added   bool
	crossed bool
}

// layoutStripes places team t's stripes in an area w pixels wide: the starting stripes in groups
// of five, then, after a gap, the added ones, also in fives. Crossed-out stripes are the first
// ones, left to right, as the scorer crosses them. It returns the marks and the number of lines.
func layoutStripes(b core.Board, t core.Team, w float32) ([]mark, int) {
	n := b.Start + b.Added[t]
	marks := make([]mark, 0, n)
	x, line, inGroup := float32(0), 0, 0
	for i := range n {
		added := i >= b.Start
		if i == b.Start && i > 0 {
			x += sectionGap - strokePitch + strokeW
			inGroup = 0
		} else if inGroup == 5 {
			x += groupGap
			inGroup = 0
		}
		if x+strokeW > w {
			x, line = 0, line+1
		}
		marks = append(marks, mark{x: x, y: float32(line * stripeLineH), added: added, crossed: i < b.Crossed[t]})
		x += strokePitch
		inGroup++
	}
	return marks, line + 1
}

// Board draws the stripe board ("Lee") as a PNG: a panel per team with its players, stripes and
// open count, then a table of the games so far.
func Board(in BoardInput, th Theme) ([]byte, error) { return pngOf(drawBoard(in, th)) }

func drawBoard(in BoardInput, th Theme) (*canvas, error) {
	in, err := in.prepare()
	if err != nil {
		return nil, err
	}
	fs, err := fontsFor(&in.Names)
	if err != nil {
		return nil, err
	}
	pal := th.palette()
	l := in.Labels
	panelW := float32(boardW - 2*margin)
	stripeW := panelW - panelBar - 2*panelPad - openColW
	var marks [2][]mark
	var panelH [2]float32
	for t := range 2 {
		var lines int
		marks[t], lines = layoutStripes(in.Board, core.Team(t), stripeW)
		panelH[t] = panelStripes + float32(lines)*stripeLineH - (stripeLineH - strokeH) + 18
	}
	rows := len(in.History)
	if rows == 0 {
		rows = 1
	}
	rows = min(rows, maxGameRows)
	tableTop := 64 + panelH[0] + 12 + panelH[1] + 22
	h := int(tableTop) + headerRowH + rows*gameRowH + margin
	c := newCanvas(boardW, h, pal.bg)

	title := face{fs[bold], 30}
	c.text(title, margin, 44, title.ellipsize(l.Title, boardW-2*margin), pal.text, left)

	y := float32(64)
	for t := range 2 {
		c.teamPanel(in, fs, pal, core.Team(t), y, panelH[t], marks[t])
		y += panelH[t] + 12
	}
	c.gamesTable(in, fs, pal, tableTop)
	return c, nil
}

// teamPanel draws team t's row of the board at y.
func (c *canvas) teamPanel(in BoardInput, fs [2]*ttFont, pal palette, t core.Team, y, h float32, marks []mark) {
	x0, x1 := float32(margin), float32(boardW-margin)
	tc := pal.team[t]
	won := in.Winner != nil && *in.Winner == t
	bg := pal.panel
	if won {
		bg = mix(tc, pal.panel, 0.14)
	}
	c.roundRect(x0, y, x1, y+h, 12, bg)
	if won {
		c.ring(x0, y, x1, y+h, 12, 3, tc)
	}
	c.roundRect(x0, y, x0+panelBar+6, y+h, 12, tc)
	c.rect(int(x0)+panelBar, int(y), int(x0)+panelBar+8, int(y+h), bg)

	l := in.Labels
	tx := x0 + panelBar + panelPad
	right := x1 - panelPad - openColW
	// Team label, names, and the winner's badge.
	lab := face{fs[bold], 25}
	tx += c.text(lab, tx, y+panelTopText, l.team(int(t)), tc, left) + 12
	badgeW := float32(0)
	small := face{fs[bold], 18}
	if won {
		badgeW = small.width(l.Winner) + 24
	}
	nf := face{fs[regular], 23}
	names := nf.ellipsize(teamNames(in.Names, l, t), right-tx-badgeW-12)
	tx += c.text(nf, tx, y+panelTopText, names, pal.text, left) + 12
	if won {
		c.roundRect(tx, y+panelTopText-22, tx+badgeW, y+panelTopText+6, 14, tc)
		c.text(small, tx+badgeW/2, y+panelTopText-2, l.Winner, pal.onTeam, center)
	}

	// The stripes.
	sx, sy := x0+panelBar+panelPad, y+panelStripes
	for _, m := range marks {
		col := pal.text
		if m.added {
			col = pal.added
		}
		if m.crossed {
			col = mix(col, pal.panel, 0.35)
		}
		mx, my := sx+m.x, sy+m.y
		c.line(mx+strokeW/2, my+strokeW/2, mx+strokeW/2, my+strokeH-strokeW/2, strokeW, col)
	}
	for _, m := range marks {
		if m.crossed {
			mx, my := sx+m.x, sy+m.y
			c.line(mx-5, my+strokeH*0.78, mx+strokeW+5, my+strokeH*0.22, 4, tc)
		}
	}

	// The open count.
	ox := x1 - panelPad - openColW/2
	open := in.Board.Open(t)
	big := face{fs[bold], 50}
	col := pal.text
	if won {
		col = tc
	}
	c.text(big, ox, y+h/2+10, strconv.Itoa(open), col, center)
	of := face{fs[regular], 20}
	c.text(of, ox, y+h/2+37, of.ellipsize(l.counted(open, l.Open, l.OpenOne), openColW), pal.muted, center)
}

// The games table's columns: left edges and centres, relative to the margin.
const (
	colGame    = 0
	colTrump   = 62
	colCalls   = 292
	colPoints  = 462
	colStripes = 572
	colEnd     = boardW - 2*margin
)

// gamesTable draws the games so far, the latest at the bottom.
func (c *canvas) gamesTable(in BoardInput, fs [2]*ttFont, pal palette, top float32) {
	l := in.Labels
	x := float32(margin)
	hf := face{fs[bold], 19}
	hb := top + headerRowH - 13
	c.text(hf, x+(colGame+colTrump)/2, hb, hf.ellipsize(l.Game, colTrump-colGame-4), pal.muted, center)
	c.text(hf, x+colTrump+6, hb, hf.ellipsize(l.Trump, colCalls-colTrump-8), pal.muted, left)
	c.text(hf, x+colCalls, hb, hf.ellipsize(l.Calls, colPoints-colCalls-8), pal.muted, left)
	c.text(hf, x+(colPoints+colStripes)/2, hb, hf.ellipsize(l.Points, colStripes-colPoints-4), pal.muted, center)
	c.text(hf, x+(colStripes+colEnd)/2, hb, hf.ellipsize(l.Stripes, colEnd-colStripes-4), pal.muted, center)
	c.rect(margin, int(top)+headerRowH-3, boardW-margin, int(top)+headerRowH-1, pal.line)

	y := top + headerRowH
	rf := face{fs[regular], 22}
	bf := face{fs[bold], 22}
	games := in.History
	row := 0
	stripe := func() {
		if row%2 == 1 {
			c.rect(margin, int(y), boardW-margin, int(y)+gameRowH, pal.panel)
		}
	}
	base := func() float32 { return y + gameRowH/2 + rf.capHeight()/2 }
	if len(games) == 0 {
		c.text(rf, x+colTrump+6, base(), l.NoGames, pal.muted, left)
		return
	}
	first := 0
	if len(games) > maxGameRows {
		first = len(games) - (maxGameRows - 1)
		row++
		c.text(rf, x+colTrump+6, base(), "… "+strconv.Itoa(first)+" "+l.counted(first, l.Earlier, l.EarlierOne), pal.muted, left)
		y += gameRowH
	}
	for i := first; i < len(games); i++ {
		g := games[i]
		stripe()
		by := base()
		c.text(bf, x+(colGame+colTrump)/2, by, strconv.Itoa(i+1), pal.muted, center)
		// Who named trump, and the suit.
		sym := face{fs[bold], 25}
		tx := x + colTrump + 6
		c.text(sym, tx+11, by+1, g.Trump.Symbol(), pal.suitInk(g.Trump), center)
		fore := g.Dealer.Next()
		c.text(rf, tx+30, by, rf.ellipsize(name(in.Names, l, fore), colCalls-colTrump-46), pal.team[fore.Team()], left)
		// The calls, each in its caller's team colour.
		cx := x + colCalls
		for j, a := range g.Calls {
			s := a.Call.Title()
			if j < len(g.Calls)-1 {
				s += ","
			}
			s = rf.ellipsize(s, x+colPoints-8-cx)
			cx += c.text(rf, cx, by, s, pal.team[a.Seat.Team()], left) + rf.size*0.3
		}
		if len(g.Calls) == 0 {
			c.text(rf, cx, by, "–", pal.muted, left)
		}
		// Card points, the winner's in bold team colour.
		pc := x + (colPoints+colStripes)/2
		win, decided := g.Outcome.Winner()
		for t := range 2 {
			f, col := rf, pal.muted
			if decided && int(win) == t {
				f, col = bf, pal.team[t]
			}
			if t == 0 {
				c.text(f, pc-10, by, strconv.Itoa(g.Points[0]), col, right)
			} else {
				c.text(f, pc+10, by, strconv.Itoa(g.Points[1]), col, left)
			}
		}
		c.text(rf, pc, by, "–", pal.muted, center)
		// Stripe changes: crossed out in team colour, added in the added colour.
		sc := x + colStripes + (colEnd-colStripes)/4
		for t := range 2 {
			d := g.Applied[t]
			col := pal.muted
			switch {
			case d < 0:
				col = pal.team[t]
			case d > 0:
				col = pal.added
			}
			f := bf
			if d == 0 {
				f = rf
			}
			c.text(f, sc+float32(t)*(colEnd-colStripes)/2, by, signed(d), col, center)
		}
		y += gameRowH
		row++
	}
}

// suitInk is the colour of a suit symbol on the page (black suits take the ink colour so they
// show on a dark page).
func (p palette) suitInk(s core.Suit) color.RGBA {
	if s.Red() {
		return p.redInk
	}
	return p.text
}

// AltText is a short text version of the board for screen readers and notifications: each team's
// open, crossed-out and added stripes, the last game and the winner. It is empty for input Board
// refuses.
func (in BoardInput) AltText() string {
	in, err := in.prepare()
	if err != nil {
		return ""
	}
	l := in.Labels
	var sb strings.Builder
	sb.WriteString(l.Title)
	sb.WriteString(". ")
	for t := core.TeamA; t <= core.TeamB; t++ {
		open := in.Board.Open(t)
		fmt.Fprintf(&sb, "%s (%s)%s%d %s", l.team(int(t)), teamNames(in.Names, l, t), l.Colon, open, l.counted(open, l.Open, l.OpenOne))
		if n := in.Board.Crossed[t]; n > 0 {
			fmt.Fprintf(&sb, ", %d %s", n, l.counted(n, l.Crossed, l.CrossedOne))
		}
		if n := in.Board.Added[t]; n > 0 {
			fmt.Fprintf(&sb, ", %d %s", n, l.counted(n, l.Added, l.AddedOne))
		}
		sb.WriteString(". ")
	}
	if n := len(in.History); n > 0 {
		g := in.History[n-1]
		fmt.Fprintf(&sb, "%s %d%s%s %s %s", l.Game, n, l.Colon, l.Trump, g.Trump.Symbol(), name(in.Names, l, g.Dealer.Next()))
		if len(g.Calls) > 0 {
			sb.WriteString(", " + callsText(g.Calls))
		}
		fmt.Fprintf(&sb, ", %s %d–%d", l.Points, g.Points[0], g.Points[1])
		if _, decided := g.Outcome.Winner(); !decided {
			sb.WriteString(" (" + l.Draw + ")")
		}
		fmt.Fprintf(&sb, ", %s %s %s, %s %s. ", l.Stripes, l.TeamA, signed(g.Applied[0]), l.TeamB, signed(g.Applied[1]))
	} else {
		sb.WriteString(l.NoGames + ". ")
	}
	if in.Winner != nil {
		fmt.Fprintf(&sb, "%s%s%s.", l.Winner, l.Colon, l.team(int(*in.Winner)))
	}
	return strings.TrimSpace(sb.String())
}
