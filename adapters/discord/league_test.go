package discord

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/storage/mem"
)

var teamWon = regexp.MustCompile(`🏆 Team ([AB]) \(`)

// TestLeagueInAChannel: two matches in a channel, then /km league stats, top and history,
// checked against the match summaries the channel was shown; history's buttons answer with the
// match's board as a picture and its record as a file that replays.
func TestLeagueInAChannel(t *testing.T) { eachMode(t, testLeagueInAChannel) }

func testLeagueInAChannel(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	startHarness(t, f, store, store)
	players := []seatPlayer{{u: alice}, {u: carla}}
	openTable(t, f, alice, []fakeUser{carla}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	rng := rand.New(rand.NewPCG(8, 8))
	playMatch(t, f, players, rng)
	if r := f.slash(alice, guildChannel, "rematch"); r.Type != 4 {
		t.Fatalf("/km rematch answered %+v", r)
	}
	f.waitFor("the second match", func() bool { return !matchOver(f.channelLocked(guildChannel)) })
	playMatch(t, f, players, rng)
	won := map[string]int{}
	f.waitFor("two match summaries", func() bool {
		clear(won)
		n := 0
		for _, m := range f.channelLocked(guildChannel) {
			if g := teamWon.FindStringSubmatch(m.Content); g != nil && strings.Contains(m.Content, "wins the match") {
				won[map[string]string{"A": "Alice", "B": "Carla"}[g[1]]]++
				n++
			}
		}
		return n == 2
	})

	r := f.slash(alice, guildChannel, "league stats")
	if !strings.Contains(r.Content, "📊 Alice in ") || !strings.Contains(r.Content, fmt.Sprintf("2 matches · won: %d (", won["Alice"])) {
		t.Errorf("/km league stats:\n%s", r.Content)
	}
	// Carla reads French.
	r = f.slash(carla, guildChannel, "league stats", opt("player", 3, "alice"))
	if !strings.HasPrefix(r.Content, "📊 Alice · <#"+guildChannel+">\n") {
		t.Errorf("/km league stats player:alice:\n%s", r.Content)
	}
	r = f.slash(alice, guildChannel, "league top", opt("season", 3, "all"))
	if r.Files != 1 || !strings.Contains(r.Content, "All-time table in") || !strings.Contains(r.Content, "Carla — ") ||
		!strings.Contains(r.Content, fmt.Sprintf(" · won %d of 2", won["Carla"])) {
		t.Errorf("/km league top (%d files):\n%s", r.Files, r.Content)
	}
	if r := f.slash(alice, guildChannel, "league top", opt("season", 3, "yesterday")); !strings.Contains(r.Content, "/km league top") {
		t.Errorf("a bad season is answered %q", r.Content)
	}
	f.slash(alice, guildChannel, "league history")
	var hist fakeMessage
	for _, m := range f.ephemerals(alice.ID) {
		if strings.Contains(m.Content, "The last matches in") {
			hist = m
		}
	}
	if strings.Count(hist.Content, "\n") != 3 || len(hist.Rows) != 2 {
		t.Fatalf("/km league history (%d rows):\n%s", len(hist.Rows), hist.Content)
	}
	rec := f.press(alice, hist, hist.Rows[0].Components[1].CustomID)
	if len(rec.Attached) != 1 || !strings.HasSuffix(rec.Attached[0].Name, ".json") {
		t.Fatalf("the record button answered %+v", rec)
	}
	if _, err := core.Replay(rec.Attached[0].Data); err != nil {
		t.Errorf("the record does not replay: %v", err)
	}
	board := f.press(alice, hist, hist.Rows[0].Components[0].CustomID)
	if len(board.Attached) != 1 || board.Attached[0].Name != "board.png" {
		t.Errorf("the board button answered %+v", board)
	}
	// Forgetting needs the confirmation, and answers privately.
	if r := f.slash(alice, guildChannel, "league forget"); r.Flags&64 == 0 || !strings.Contains(r.Content, "/km league forget") {
		t.Errorf("/km league forget answered %+v", r)
	}
	if r := f.slash(alice, guildChannel, "league forget", opt("confirm", 5, true)); !strings.Contains(r.Content, "your name is gone from 2 matches") {
		t.Errorf("/km league forget confirm:true answered %q", r.Content)
	}
}
