package table

import (
	"context"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The public timeline of a match follows from its stored state: what a place must be told of
// the games played so far is rendered from the match like the table message is, under keys of
// its own, so that an adapter that keeps what each key shows (a message record) tells each of
// them once, also after a crash, a stop or a take-over by another copy (the service delivers
// every editable message again then). Summaries are keyed but shown once: a summary's record
// means it is out, and it is never edited.

// told are the messages of the match so far that follow from its state, in the order the place
// is told them, with the table message as it is now: the last version of the previous game's
// table message (its result, no buttons) while the next game is played, each finished game's
// summary, the table message, and at the match's end the match's summary. A game's last table
// message goes right before its result, the last game's too: a place whose sends are rationed
// (Telegram's 20 a minute) shows the last card before the summaries, not after them. A summary
// whose key was delivered is left out: it never changes.
func (r renderer) told(sh *sight, delivered func(key string) bool) []api.Message {
	if !sh.match {
		return []api.Message{r.liveMessage(sh, sh.games)}
	}
	_, over := sh.board.Winner()
	n := sh.games
	// The previous game's table message, while the next game is played: its last version goes
	// right before its result.
	prev := n >= 2 && sh.finished == n-1
	var out []api.Message
	var hist []core.GameScore
	for i := range sh.finished {
		if prev && i == n-2 {
			out = append(out, r.liveMessage(sh, i+1))
		}
		if over && i == n-1 {
			out = append(out, r.liveMessage(sh, n))
		}
		if delivered(sh.key(api.KindSummary, i+1, "")) {
			continue // a summary never changes: once delivered, it is not made again for every move
		}
		if hist == nil {
			hist = sh.history()
		}
		out = append(out, r.gameSummary(sh, hist[i], i+1))
	}
	if over {
		return append(out, r.matchSummary(sh))
	}
	return append(out, r.liveMessage(sh, n))
}

// Retell delivers every editable message of the table at a place once more, as it stands, with
// what follows from its state (told): for a copy of the bot that took the place over, whose
// deliveries for it so far were another copy's to tell. An adapter that keeps what each message
// shows sends only what was not shown. A place without a live table here has nothing to tell.
func (s *Service) Retell(ctx context.Context, p api.Place) {
	t, ok := s.table(s.TableAt(p))
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.sent)
	t.handSig = [4]handSig{}
	s.send(ctx, t, nil, false)
}
