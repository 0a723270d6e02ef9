package picture

import (
	"fmt"
	"image/color"
)

// Theme is the colour scheme of a picture, chosen to match the chat's light or dark theme.
type Theme uint8

// The two themes; the zero value is Light.
const (
	Light Theme = iota
	Dark
)

func (t Theme) String() string {
	if t == Dark {
		return "dark"
	}
	return "light"
}

// ParseTheme reads "light" or "dark".
func ParseTheme(s string) (Theme, error) {
	switch s {
	case "light":
		return Light, nil
	case "dark":
		return Dark, nil
	}
	return Light, fmt.Errorf("picture: unknown theme %q", s)
}

// palette holds a theme's colours.
type palette struct {
	bg, panel, line   color.RGBA // page, panels and table rows, rules and borders
	text, muted       color.RGBA // ink and secondary ink
	team              [2]color.RGBA
	added             color.RGBA // stripes added after a lost trump game
	accent            color.RGBA // whose turn, the trick's winner
	onAccent          color.RGBA // text on the accent colour
	onTeam            color.RGBA // text on a team colour
	felt, feltEdge    color.RGBA
	feltText          color.RGBA
	cardFace, cardRim color.RGBA
	cardBack          color.RGBA
	shadow            color.RGBA // premultiplied, translucent
	red, black        color.RGBA // suit colours on cards
	redInk            color.RGBA // red suits on the page
}

func rgb(v uint32) color.RGBA { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255} }

var palettes = [2]palette{
	Light: {
		bg: rgb(0xf7f7f4), panel: rgb(0xffffff), line: rgb(0xdedcd5),
		text: rgb(0x1d1f23), muted: rgb(0x6b6f76),
		team:   [2]color.RGBA{rgb(0x1f5fbf), rgb(0x0b7a55)},
		added:  rgb(0xc62828),
		accent: rgb(0xf0ad1c), onAccent: rgb(0x1d1f23), onTeam: rgb(0xffffff),
		felt: rgb(0x2f7d4f), feltEdge: rgb(0x23603c), feltText: rgb(0xe9f3ec),
		cardFace: rgb(0xffffff), cardRim: rgb(0xb9bcc2), cardBack: rgb(0x8c2f39),
		shadow: color.RGBA{0, 0, 0, 60},
		red:    rgb(0xd01c1c), black: rgb(0x17181b), redInk: rgb(0xcc1f1f),
	},
	Dark: {
		bg: rgb(0x1b1d21), panel: rgb(0x262930), line: rgb(0x3a3e47),
		text: rgb(0xeceef1), muted: rgb(0x9aa0aa),
		team:   [2]color.RGBA{rgb(0x6fa8ff), rgb(0x4fd1a0)},
		added:  rgb(0xff6b6b),
		accent: rgb(0xf5b82e), onAccent: rgb(0x1b1d21), onTeam: rgb(0x1b1d21),
		felt: rgb(0x1e5235), feltEdge: rgb(0x153c27), feltText: rgb(0xdcebe1),
		cardFace: rgb(0xf3f2ee), cardRim: rgb(0x8d9097), cardBack: rgb(0x9c3b46),
		shadow: color.RGBA{0, 0, 0, 110},
		red:    rgb(0xd01c1c), black: rgb(0x17181b), redInk: rgb(0xff6b6b),
	},
}

func (t Theme) palette() palette {
	if t == Dark {
		return palettes[Dark]
	}
	return palettes[Light]
}
