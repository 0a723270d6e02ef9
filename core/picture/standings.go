package picture

import (
	"fmt"
	"strconv"
	"strings"
)

// StandingsInput is a league table as the league ranks it; all of it is public.
type StandingsInput struct {
	Title  string // "Table of November 2026 in Café Konter"
	Rows   []StandingRow
	Labels Labels
}

// StandingRow is one ranked person.
type StandingRow struct {
	Name string
	// Rating is the ordinal as the table's language writes numbers ("21.4", "21,4").
	Rating      string
	Won, Played int
	Provisional bool // drawn muted, with the Provisional label
}

// maxStandingRows is how many people the picture lists; the rest are counted on the last line.
const maxStandingRows = 20

// The table's geometry, in pixels.
const (
	standRowH    = 44
	standHeadH   = 40
	colRank      = 0
	colName      = 56
	colRating    = 440 // right edge of the rating
	colWonPlayed = 575 // centre of won/played
)

func (in StandingsInput) prepare() StandingsInput {
	in.Labels = in.Labels.withDefaults()
	if strings.TrimSpace(in.Title) == "" {
		in.Title = in.Labels.Standings
	}
	return in
}

// Standings draws a league table as a PNG in the board's theme: rank, name, rating and matches
// won of played, provisional people muted.
func Standings(in StandingsInput, th Theme) ([]byte, error) {
	in = in.prepare()
	fs, err := loadFonts()
	if err != nil {
		return nil, err
	}
	pal := th.palette()
	l := in.Labels
	rows := in.Rows
	more := 0
	if len(rows) > maxStandingRows {
		more = len(rows) - (maxStandingRows - 1)
		rows = rows[:maxStandingRows-1]
	}
	lines := max(len(rows)+min(more, 1), 1)
	top := float32(64)
	h := int(top) + standHeadH + lines*standRowH + margin
	c := newCanvas(boardW, h, pal.bg)

	title := face{fs[bold], 30}
	c.text(title, margin, 44, title.ellipsize(in.Title, boardW-2*margin), pal.text, left)

	x := float32(margin)
	hf := face{fs[bold], 19}
	hb := top + standHeadH - 13
	c.text(hf, x+colName, hb, hf.ellipsize(l.Player, colRating-colName-120), pal.muted, left)
	c.text(hf, x+colRating, hb, hf.ellipsize(l.Rating, 110), pal.muted, right)
	c.text(hf, x+colWonPlayed, hb, hf.ellipsize(l.Won+" / "+l.Played, 2*(colEnd-colWonPlayed)+2*margin-8), pal.muted, center)
	c.rect(margin, int(top)+standHeadH-3, boardW-margin, int(top)+standHeadH-1, pal.line)

	y := top + standHeadH
	rf := face{fs[regular], 23}
	bf := face{fs[bold], 23}
	small := face{fs[regular], 17}
	base := func() float32 { return y + standRowH/2 + rf.capHeight()/2 }
	if len(in.Rows) == 0 {
		c.text(rf, x+colName, base(), rf.ellipsize(l.NoMatches, colEnd-colName), pal.muted, left)
		return c.png()
	}
	for i, r := range rows {
		if i%2 == 1 {
			c.rect(margin, int(y), boardW-margin, int(y)+standRowH, pal.panel)
		}
		ink := pal.text
		if r.Provisional {
			ink = pal.muted
		}
		by := base()
		if i < 3 && !r.Provisional { // the podium in the accent colour
			c.circle(x+colRank+20, y+standRowH/2, 15, pal.accent)
			c.text(bf, x+colRank+20, by, strconv.Itoa(i+1), pal.onAccent, center)
		} else {
			c.text(bf, x+colRank+20, by, strconv.Itoa(i+1), pal.muted, center)
		}
		nameW := float32(colRating - colName - 120)
		tag := ""
		if r.Provisional {
			tag = l.Provisional
			nameW -= small.width(tag) + 10
		}
		shown := readable(fs[regular], r.Name)
		if shown == "" {
			shown = l.Player + " " + strconv.Itoa(i+1)
		}
		nx := x + colName + c.text(rf, x+colName, by, rf.ellipsize(shown, nameW), ink, left)
		if tag != "" {
			c.text(small, nx+10, by, tag, pal.muted, left)
		}
		c.text(bf, x+colRating, by, r.Rating, ink, right)
		c.text(rf, x+colWonPlayed, by, strconv.Itoa(r.Won)+" / "+strconv.Itoa(r.Played), ink, center)
		y += standRowH
	}
	if more > 0 {
		c.text(rf, x+colName, base(), fmt.Sprintf("… +%d", more), pal.muted, left)
	}
	return c.png()
}

// AltText describes the table in words: its title, then each person with rating and matches.
func (in StandingsInput) AltText() string {
	in = in.prepare()
	l := in.Labels
	var sb strings.Builder
	sb.WriteString(in.Title)
	sb.WriteString(". ")
	if len(in.Rows) == 0 {
		sb.WriteString(l.NoMatches + ".")
		return sb.String()
	}
	for i, r := range in.Rows {
		fmt.Fprintf(&sb, "%d. %s, %s %s, %s %d / %s %d", i+1, r.Name, l.Rating, r.Rating, l.Won, r.Won, l.Played, r.Played)
		if r.Provisional {
			sb.WriteString(" (" + l.Provisional + ")")
		}
		sb.WriteString(". ")
	}
	return strings.TrimSpace(sb.String())
}
