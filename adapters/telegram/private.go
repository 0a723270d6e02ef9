package telegram

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"sync"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Telegram lets a bot write to a user privately only after the user pressed Start. Until then
// (or after they block the bot) the adapter remembers them as unreachable (chat.Unreachable) and
// sends them nothing, as the delivery policy says (adapters/internal/chat): their keyed messages
// (hands) wait in KV, and the group is shown, once per table, a deep link whose /start delivers
// the hand; a notice goes to the group by its public form. Any private message from the user
// ends the wait.

// users caches what KV knows about users' hands and held-back messages.
type users struct {
	mu    sync.Mutex
	hands map[string]string // "table/user" → newest hand Key
	saved map[string]string // "table/user" → the hand Key last written to bucketHand
	// pendMu is held while reading and writing bucketPending and held.
	pendMu sync.Mutex
	// held are the tables whose messages wait in bucketPending for a user. It needs no store:
	// at every start the service delivers each live table's messages again (table.Outbox), and
	// a blocked user's are held back anew.
	held map[int64]map[string]bool
}

func (u *users) init() {
	u.hands = map[string]string{}
	u.saved = map[string]string{}
	u.held = map[int64]map[string]bool{}
}

func userKey(user int64) string { return strconv.FormatInt(user, 10) }

// userTable is the KV key of a user's note about a table; it begins with the table, so it is pruned
// with it.
func userTable(user int64, tableID string) string { return tableID + "/" + userKey(user) }

// baseContext is Run's context without its end, for what the adapter reads and writes in its KV
// outside any one update (the outbox's workers, the groups' notes): they live as long as Run.
// Before Run, nothing has a context to give: only tests call the adapter then.
func (a *Adapter) baseContext() context.Context {
	if base := a.base.Load(); base != nil {
		return *base
	}
	return context.Background()
}

// isBlocked reports whether private messages to the user are known to fail.
func (a *Adapter) isBlocked(user int64) bool { return a.reach.Is(a.baseContext(), userKey(user)) }

// blocked handles private messages that failed because the user cannot get one (from the
// outbox's worker): the user is remembered, and each message goes as the delivery policy says.
// A reply with a public form made for it (its fallback) sends that to the group; a hand waits,
// and the group gets its deep link; a notice goes to its table's group by its public form,
// naming the user; anything else is dropped.
func (a *Adapter) blocked(user int64, items []*item) {
	if !slices.ContainsFunc(items, func(it *item) bool { return it.Msg.Reason == api.ReasonForgotten }) {
		a.reach.Set(a.baseContext(), userKey(user), true) // not of a person just forgotten: nothing of them is written again
	}
	for _, it := range items {
		m := it.Msg
		switch {
		case it.Data.fallback != nil:
			a.enqueue(it.Data.fallback)
		case it.Key != "":
			a.holdBack(user, m)
		case it.Data.hand:
			a.tell(user, m)
		case m.Kind == api.KindNotice:
			group, thread, ok := chatOf(m.Target.Place)
			pub, shown := chat.Public(m)
			if !ok || !shown || group > 0 {
				continue
			}
			lang := i18n.Pick(m.Lang, m.Target.Player.Locale)
			pub.Text = i18n.T(lang, "term.for", m.Target.Player.Name) + " " + pub.Text
			pub.Target = api.Target{Kind: api.ToPlace, Place: m.Target.Place}
			a.enqueue(newItem(group, thread, pub))
		}
	}
}

// holdBack keeps a message for a user who cannot get it now and makes sure the table's group was
// told how to fix that. Only the newest of each kind (the hand) of each table is kept, and only
// while it has something to press: a finished game's hand is of no use when the user comes. It
// is kept under the table's ID, so it goes when the table is pruned (table.KV).
func (a *Adapter) holdBack(user int64, m api.Message) {
	if m.Key != "" && m.Table != "" {
		a.users.pendMu.Lock()
		pending := a.pending(user, m.Table)
		i := slices.IndexFunc(pending, func(p api.Message) bool { return p.Kind == m.Kind })
		if i < 0 || pending[i].Version <= m.Version {
			if i >= 0 {
				pending = slices.Delete(pending, i, i+1)
			}
			if len(m.Buttons) > 0 {
				pending = append(pending, m)
			}
			a.savePending(user, m.Table, pending)
		}
		a.users.pendMu.Unlock()
	}
	if m.Kind == api.KindHand {
		a.tell(user, m)
	}
}

func (a *Adapter) pending(user int64, tableID string) []api.Message {
	b, ok, err := a.kv.Get(a.baseContext(), bucketPending, userTable(user, tableID))
	if err != nil || !ok {
		return nil
	}
	var ms []api.Message
	if err := json.Unmarshal(b, &ms); err != nil {
		a.log.Error("reading held-back messages", "user", user, "err", err)
		return nil
	}
	return ms
}

// savePending stores what is held back for a user at a table (users.pendMu held).
func (a *Adapter) savePending(user int64, tableID string, ms []api.Message) {
	var err error
	if len(ms) == 0 {
		err = a.kv.Delete(a.baseContext(), bucketPending, userTable(user, tableID))
		delete(a.users.held[user], tableID)
		if len(a.users.held[user]) == 0 {
			delete(a.users.held, user)
		}
	} else {
		b, _ := json.Marshal(ms)
		err = a.kv.Put(a.baseContext(), bucketPending, userTable(user, tableID), b)
		if a.users.held[user] == nil {
			a.users.held[user] = map[string]bool{}
		}
		a.users.held[user][tableID] = true
	}
	if err != nil {
		a.log.Error("saving held-back messages", "user", user, "err", err)
	}
}

// takePending gives and forgets what is held back for a user at every table.
func (a *Adapter) takePending(user int64) []api.Message {
	a.users.pendMu.Lock()
	defer a.users.pendMu.Unlock()
	var out []api.Message
	for _, tableID := range slices.Sorted(maps.Keys(a.users.held[user])) {
		out = append(out, a.pending(user, tableID)...)
		a.savePending(user, tableID, nil)
	}
	// Before, the held hands were kept under the user alone, for ever: the entry goes (the
	// service delivered every live table's hands again at the start, held under the tables).
	if err := a.kv.Delete(a.baseContext(), bucketPending, userKey(user)); err != nil {
		a.log.Error("deleting held-back messages of an older version", "user", user, "err", err)
	}
	return out
}

// tell posts, once per user and table, the deep link to the bot's private chat in the table's
// group. Only a hand that could not be sent calls for it.
func (a *Adapter) tell(user int64, m api.Message) {
	chat, thread, ok := chatOf(m.Target.Place)
	if !ok || chat == user || !a.reach.TellOnce(a.baseContext(), m.Table, userKey(user)) {
		return
	}
	lang := i18n.Pick(m.Lang, m.Target.Player.Locale)
	name := m.Target.Player.Name
	it := newItem(chat, thread, api.Message{Kind: api.KindNotice, Table: m.Table,
		Text: tr(lang, "dm.needed", name, i18n.T(lang, "btn.hand")), Lang: lang})
	it.Data.link, it.Data.label = a.deepLink(m.Table), tr(lang, "dm.button")
	a.enqueue(it)
}

// deepLink opens the bot's private chat; pressing Start there sends "/start <table>".
func (a *Adapter) deepLink(tableID string) string {
	return "https://t.me/" + a.Username() + "?start=" + url.QueryEscape(tableID)
}

// reachable notes that the user can get private messages (they wrote to the bot privately) and
// sends what was held back.
func (a *Adapter) reachable(user int64) {
	if !a.reach.Set(a.baseContext(), userKey(user), false) {
		return
	}
	pending := a.takePending(user)
	a.log.Info("a user can get private messages again", "held_back", len(pending))
	for _, m := range pending {
		a.enqueue(newItem(user, 0, m))
	}
}

// noteHand remembers the user's newest hand message Key at a table, so a request for the hand
// can bring that very message to the bottom of the private chat. It only notes it in memory:
// the service delivers holding the table's lock; saveHand writes it to the KV later.
func (a *Adapter) noteHand(user int64, tableID, key string) {
	a.users.mu.Lock()
	a.users.hands[userTable(user, tableID)] = key
	a.users.mu.Unlock()
}

// saveHand writes the newest hand Key noted for a user's hand message to the KV, if it is not
// there yet (from the outbox's worker, with the message on its way).
func (a *Adapter) saveHand(user int64, m api.Message) {
	if m.Kind != api.KindHand || m.Key == "" || m.Table == "" {
		return
	}
	k := userTable(user, m.Table)
	a.users.mu.Lock()
	key, due := a.users.hands[k], false
	if key != "" && a.users.saved[k] != key {
		if len(a.users.saved) >= 4096 { // a bound: one that was forgotten is written once more
			clear(a.users.saved)
		}
		a.users.saved[k], due = key, true
	}
	a.users.mu.Unlock()
	if !due {
		return
	}
	if err := a.kv.Put(a.baseContext(), bucketHand, k, []byte(key)); err != nil {
		a.log.Error("saving hand key", "err", err)
	}
}

func (a *Adapter) handKey(user int64, tableID string) string {
	k := userTable(user, tableID)
	a.users.mu.Lock()
	key, ok := a.users.hands[k]
	a.users.mu.Unlock()
	if ok {
		return key
	}
	b, ok, err := a.kv.Get(a.baseContext(), bucketHand, k)
	if err != nil || !ok {
		return ""
	}
	a.users.mu.Lock()
	a.users.hands[k] = string(b)
	a.users.saved[k] = string(b)
	a.users.mu.Unlock()
	return string(b)
}

// sendHand shows a hand the user asked for in their private chat. The service's reply has the
// same text and buttons as the user's keyed hand message, so it is sent as that message, anew at
// the bottom of the chat (the old one is deleted): one set of live buttons, where the user looks.
func (a *Adapter) sendHand(user int64, r api.Message) {
	it := newItem(user, 0, r)
	it.Data.hand = true
	a.browserLink(it, r)
	if key := a.handKey(user, r.Table); key != "" {
		it.Key, it.Repost = key, true
		it.Msg.Key, it.Msg.Kind = key, api.KindHand
	}
	a.enqueue(it)
}

// browserLink adds to the answer to a request for the hand a one-time link to the web table, for
// any browser (when the web table runs). It goes to the player's private chat only.
func (a *Adapter) browserLink(it *item, r api.Message) {
	w := a.cfg.Web
	if w == nil || r.Table == "" || r.Kind != api.KindReply && r.Kind != api.KindHand {
		return
	}
	link, err := w.Link(r.Target.Player, r.Table)
	if err != nil {
		a.log.Warn("no web table link for a hand", "err", err)
		return
	}
	it.Data.browser, it.Data.browserLabel = link, i18n.T(i18n.Pick(r.Lang), "web.open_browser")
}
