package chat

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The delivery policy every surface follows: who may see a message meant for one person, what
// becomes of it when their private chat refuses the bot, and what a place that refuses the bot
// does to its table. The outbox engine (adapters/internal/outbox) holds the messages of such a
// place as a paused destination; this file holds the rest, so that Discord, Telegram and the
// terminal decide alike.
//
//   - A message for one person goes to them privately: a private chat, a pop-up, an ephemeral
//     reply. Where a surface can reach them only where others see it (their private chat refuses
//     the bot, a hot seat's shared screen), it shows the message's public form (Public): a
//     secret text only by its public text, which reveals nothing they hold, or not at all; a
//     hand never. Hands wait for a private way (the surface's own: a deep link, an ephemeral
//     hand), and the place of their table is told once per person and table how to get it.
//   - A place that refuses the bot for now pauses: its messages wait in the outbox, the service
//     pauses its table (no computer moves, no timers) and tells its players privately; the
//     first message that reaches it again resumes the table (Reached).

// Public is a message for one person as it may be shown where others see it, or false if nothing
// of it may: a hand (the cards its player holds), or a secret text without a public one. A
// secret message shows its public text alone, without its buttons, picture or file, which may
// show what its person holds.
func Public(m api.Message) (api.Message, bool) {
	if m.Kind == api.KindHand {
		return m, false
	}
	if m.Secret {
		if m.Public == "" {
			return m, false
		}
		m.Text, m.Buttons, m.Picture, m.File = m.Public, nil, api.PictureNone, nil
	}
	m.Secret, m.Public = false, ""
	return m, true
}

// Reached is told that a message of a table went out at its place: if the service has the table
// paused there (the place refused the bot, before a restart perhaps), it goes on, and its players
// are told. It may be called from an outbox worker, never holding a table's lock.
func (s *Slot) Reached(ctx context.Context, place api.Place, tableID string) {
	svc := s.Service()
	if tableID == "" || svc == nil || !svc.Paused(tableID) || svc.TableAt(place) != tableID {
		return
	}
	_ = svc.Pause(ctx, place, false) // logged by the service; the next message tries again
}

// Unreachable remembers, durably, the people whose private chat refuses the bot (they closed
// their DMs, blocked it, never opened the chat), so that the bot stops asking — each refused
// request counts against it — until they write to it privately; and which places were told how
// such a person gets their hand, once per person and table. Keys are the platform's user IDs.
type Unreachable struct {
	kv           table.KV
	people, told string // KV buckets: person → since when; "<table>/<person>" → told
	log          *slog.Logger
	mu           sync.Mutex
	known        map[string]bool // cache of bucket people
	toldCache    map[string]bool // cache of bucket told
}

// maxCached bounds each cache; beyond it the cache starts afresh (the KV has it all).
const maxCached = 4096

// NewUnreachable keeps the people in the KV bucket people (one registered with table.People, so
// that forgetting a person deletes it) and the places told in the bucket told, keyed by table
// (pruned with it).
func NewUnreachable(kv table.KV, people, told string, log *slog.Logger) *Unreachable {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Unreachable{kv: kv, people: people, told: told, log: log, known: map[string]bool{}, toldCache: map[string]bool{}}
}

// Is reports whether the person's private chat is known to refuse the bot.
func (u *Unreachable) Is(ctx context.Context, person string) bool {
	u.mu.Lock()
	v, ok := u.known[person]
	u.mu.Unlock()
	if ok {
		return v
	}
	_, found, err := u.kv.Get(ctx, u.people, person)
	if err != nil {
		u.log.Error("reading the KV", "bucket", u.people, "err", err)
		return false
	}
	u.mu.Lock()
	if len(u.known) >= maxCached {
		clear(u.known)
	}
	u.known[person] = found
	u.mu.Unlock()
	return found
}

// Set notes that the person's private chat refuses the bot (or takes its messages again); it
// reports whether that is news.
func (u *Unreachable) Set(ctx context.Context, person string, refuses bool) (changed bool) {
	if u.Is(ctx, person) == refuses {
		return false
	}
	u.mu.Lock()
	u.known[person] = refuses
	u.mu.Unlock()
	var err error
	if refuses {
		err = u.kv.Put(ctx, u.people, person, []byte(time.Now().UTC().Format(time.RFC3339)))
	} else {
		err = u.kv.Delete(ctx, u.people, person)
	}
	if err != nil {
		u.log.Error("writing the KV", "bucket", u.people, "err", err)
	}
	return true
}

// TellOnce reports whether the place of a table is yet to be told how the person gets their hand
// there, and notes that it is told now. False without a table.
func (u *Unreachable) TellOnce(ctx context.Context, tableID, person string) bool {
	if tableID == "" {
		return false
	}
	k := tableID + "/" + person
	u.mu.Lock()
	told := u.toldCache[k]
	if len(u.toldCache) >= maxCached {
		clear(u.toldCache)
	}
	u.toldCache[k] = true
	u.mu.Unlock()
	if told {
		return false
	}
	if _, told, err := u.kv.Get(ctx, u.told, k); err != nil || told {
		return false
	}
	if err := u.kv.Put(ctx, u.told, k, []byte("1")); err != nil {
		u.log.Error("writing the KV", "bucket", u.told, "err", err)
	}
	return true
}
