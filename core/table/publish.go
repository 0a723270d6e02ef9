package table

import (
	"context"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
)

// publisher is what follows a stored change for the people at the table: the table's messages
// as they look now (render), only those whose content changed, a guided game's lesson for the
// turn, the hands held until the place shows a finished trick (holdHands), handed to the
// platform's outbox. It exists so that telling is apart from deciding and storing: it holds what
// telling needs and nothing of the store, the index or the commit path, so a change reaches the
// platforms only through it, and only once the caller has stored it (Service.commit, a table
// another copy stored, Resume).
type publisher struct {
	outboxes map[string]Outbox // Config.Outboxes: messages for a platform without one are dropped
	view     renderer
	// pacer is the service's: a finished trick's time in view, and whether a place's adapter
	// reports what it shows (the hands wait for that).
	pacer *pace.Pacer
	// lessons is the guided game's lesson for the turn, once (tutor.lessons).
	lessons func(t *tbl) []api.Message
	// life is the service's: held hands released after it ended are not delivered.
	life context.Context
	// onPublish, when set (by this package's tests), sees each batch of messages with its table,
	// under the table's lock, before delivery.
	onPublish func(t *tbl, msgs []api.Message)
}

// deliver hands messages to their platforms' outboxes.
func (p *publisher) deliver(ctx context.Context, platform string, msgs []api.Message) {
	if len(msgs) == 0 {
		return
	}
	if ob, ok := p.outboxes[platform]; ok {
		ob.Deliver(ctx, msgs)
	}
}

// publish sends the table's editable messages whose content changed, and the one-off messages
// (table lock held).
func (p *publisher) publish(ctx context.Context, t *tbl, extra []api.Message) {
	p.send(ctx, t, extra, true)
}

// send is publish; without lessons, a guided game's lesson for the turn is not said (another
// copy, whose change this copy took in, said it), only noted as said.
func (p *publisher) send(ctx context.Context, t *tbl, extra []api.Message, lessons bool) {
	// One-off messages first: a game's summary belongs before the next game's table message.
	msgs := append([]api.Message(nil), extra...)
	for _, m := range p.render(t) {
		fp := m.Digest()
		if t.sent[m.Key] == fp {
			continue
		}
		t.sent[m.Key] = fp
		msgs = append(msgs, m)
	}
	if said := p.lessons(t); lessons {
		msgs = append(msgs, said...)
	}
	for i := range msgs {
		msgs[i].Version, msgs[i].Table = t.st.Seq, t.st.ID
		if msgs[i].Target.Place == (api.Place{}) {
			msgs[i].Target.Place = t.st.Place
		}
	}
	t.published(p.pacer, msgs)
	if p.onPublish != nil {
		p.onPublish(t, msgs)
	}
	p.deliver(ctx, t.st.Place.Platform, p.holdHands(t, msgs))
}
