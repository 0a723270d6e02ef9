package table

import (
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestBadOptionsNameTheAllowedOnes opens tables with bad options: the refusal, in the sender's
// language, says what the option may be, with that language's names (English ones are understood
// too).
func TestBadOptionsNameTheAllowedOnes(t *testing.T) {
	tests := []struct {
		name, arg, en, de string
	}{
		{"stripes too few", "stripes=0", "stripes must be 1 to 20.", "stripes muss 1 bis 20 sein."},
		{"stripes too many", "stripes=21", "stripes must be 1 to 20.", "stripes muss 1 bis 20 sein."},
		{"stripes not a number", "stripes=nine", "stripes must be 1 to 20.", "stripes muss 1 bis 20 sein."},
		{"stripes empty", "stripes=", "stripes must be 1 to 20.", "stripes muss 1 bis 20 sein."},
		{"the name as typed", "Striche=99", "striche must be 1 to 20.", "striche muss 1 bis 20 sein."},
		{"draw", "draw=2", "draw must be stake or flat1.", "draw muss Einsatz oder 1 sein."},
		{"bonus", "bonus=maybe", "bonus must be on or off.", "bonus muss an oder aus sein."},
		{"announce", "announce=sometimes", "announce must be on or off.", "announce muss an oder aus sein."},
		{"timer", "timer=slow", "timer must be fast, normal, relaxed or none.", "timer muss schnell, normal, lang oder unbegrenzt sein."},
		{"direction", "dir=up", "dir must be clockwise or anticlockwise.", "dir muss Uhrzeigersinn oder Gegenuhrzeigersinn sein."},
		{"level", "level=hard", "level must be easy, normal or strong.", "level muss leicht, normal oder stark sein."},
		{"unknown", "x=1", `I don't know the option “x”: the options are stripes, draw, bonus, announce, timer, direction, level, hints, pace.`,
			`Die Option „x“ kenne ich nicht; die Optionen sind Striche, Gleichstand, Bonus, Ansagen, Bedenkzeit, Richtung, Stufe, Tipps, Tempo.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for lang, want := range map[string]string{"en": tt.en, "de": tt.de} {
				h := newHarness(t, mem.New())
				defer h.svc.Close()
				p := api.Player{ID: "p1", Name: "Jang", Locale: lang}
				if got := errText(h.do(p, api.VerbNew, "timer=none", tt.arg)); got != want {
					t.Errorf("%s: got %q, want %q", lang, got, want)
				}
				if h.svc.Tables() != 0 {
					t.Errorf("%s: a table opened", lang)
				}
			}
		})
	}
}

// TestLobbyShowsTheOptions reads the options line of a new table's lobby message.
func TestLobbyShowsTheOptions(t *testing.T) {
	tests := []struct {
		name, locale string
		args         []string
		want         string
	}{
		{"defaults", "en", nil, "9 stripes · draw costs the stake · no-trick bonus on · announcements on · timer normal · clockwise · computers normal · hints off"},
		{"one stripe", "en", []string{"stripes=1", "draw=flat1", "bonus=off", "dir=acw", "level=strong", "timer=fast", "hints=on"},
			"1 stripe · draw costs 1 stripe · no-trick bonus off · announcements on · timer fast · anticlockwise · computers strong · hints on"},
		{"luxembourgish", "lb", []string{"stripes=1"}, "1 Stréch · Stänner kascht den Asaz · Bonus fir all Streecher: un · Annoncen: un · Bedenkzäit: normal · mat der Auer · Computer: normal · Tipps: aus"},
		{"french", "fr", []string{"stripes=2", "timer=none"}, "2 traits · égalité\u00a0: la mise · bonus capot\u00a0: oui · annonces\u00a0: oui · temps de réflexion\u00a0: illimité · sens horaire · niveau des ordinateurs\u00a0: normal · conseils\u00a0: non"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, mem.New())
			defer h.svc.Close()
			if e := errText(h.do(api.Player{ID: "p1", Name: "Jang", Locale: tt.locale}, api.VerbNew, tt.args...)); e != "" {
				t.Fatal(e)
			}
			lobby, ok := h.out.latest(api.KindLobby, "")
			if lines := strings.Split(lobby.Text, "\n"); !ok || len(lines) < 2 || lines[1] != tt.want {
				t.Errorf("lobby:\n%s\nwant the options line %q", lobby.Text, tt.want)
			}
		})
	}
}

func TestHelpListsTheOptions(t *testing.T) {
	h := newHarness(t, mem.New())
	defer h.svc.Close()
	help := h.do(api.Player{ID: "p1", Name: "Jang", Locale: "en"}, api.VerbHelp)[0].Text
	want := "\n/new — open a table; options: stripes=9 (1–20) draw=stake|flat1 bonus=on|off " +
		"announce=on|off timer=normal|fast|relaxed|none direction=clockwise|anticlockwise level=normal|easy|strong hints=off|on pace=normal|fast|relaxed\n"
	if !strings.Contains(help, want) {
		t.Errorf("help:\n%s\nwant the line %q", help, want)
	}
}
