package table

import (
	"context"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// The public timeline of a match follows from its stored state: what a place must be told of
// the games played so far (render.Renderer.Told) is rendered from the match like the table
// message is, under keys of
// its own, so that an adapter that keeps what each key shows (a message record) tells each of
// them once, also after a crash, a stop or a take-over by another copy (the service delivers
// every editable message again then). Summaries are keyed but shown once: a summary's record
// means it is out, and it is never edited.

// Retell delivers every editable message of the table at a place once more, as it stands, with
// what follows from its state (told): for a copy of the bot that took the place over, whose
// deliveries for it so far were another copy's to tell. An adapter that keeps what each message
// shows sends only what was not shown. A place without a live table here has nothing to tell.
func (s *Service) Retell(ctx context.Context, p api.Place) {
	t, ok := s.index.get(s.TableAt(p))
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.sent)
	t.handSig = [4]handSig{}
	s.pub.send(ctx, t, nil, false)
}
