package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// KV buckets of the adapter.
const (
	bucketMessages = "discord.msg"  // message Key → record (channel, message ID, version, content hash)
	bucketNoDM     = "discord.nodm" // Discord user ID → present if the user refuses DMs
)

const (
	maxContent = 2000 // Discord's limit for a message's text
	maxRows    = 5    // action rows per message
	maxPerRow  = 5    // buttons per row
)

// outbox holds one queue per destination: a channel ("ch:<id>") or a user's DMs ("dm:<id>").
// Each queue has its own worker, so a rate limit on one channel's route holds back only that
// channel; discordgo waits out 429s per route bucket.
type outbox struct {
	mu     sync.Mutex
	queues map[string]*queue
	cache  msgCache
}

type queue struct {
	items    []outItem
	running  bool   // a worker is sending
	inflight string // Key of the message the worker is sending
	// held: an interaction's response is showing one of this queue's messages; nothing more is
	// sent until it is done, so no older version can overtake a newer one.
	held bool
}

type outItem struct {
	m       table.Message
	mention string // a Discord user ID this message may ping
}

// record is what the KV remembers about an editable message.
type record struct {
	Channel string `json:"c"`
	ID      string `json:"id"`
	Version uint64 `json:"v"`
	Hash    string `json:"h"`
}

// Deliver queues the service's messages; it never waits for Discord. Editable messages already
// waiting in a queue are replaced by their newer versions (latest wins).
func (a *Adapter) Deliver(_ context.Context, msgs []table.Message) {
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	for _, m := range msgs {
		dest := destination(m)
		if dest == "" {
			a.log.Warn("message without a Discord destination dropped", "kind", m.Kind, "table", m.Table)
			continue
		}
		a.enqueueLocked(dest, outItem{m: m})
	}
}

func (a *Adapter) enqueue(dest string, it outItem) {
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	a.enqueueLocked(dest, it)
}

func (a *Adapter) enqueueLocked(dest string, it outItem) {
	q := a.out.queues[dest]
	if q == nil {
		q = &queue{}
		a.out.queues[dest] = q
	}
	if it.m.Key != "" {
		for j := range q.items {
			if q.items[j].m.Key == it.m.Key {
				if it.m.Version >= q.items[j].m.Version {
					q.items[j] = it
				}
				return
			}
		}
	}
	q.items = append(q.items, it)
	a.startLocked(dest, q)
}

// startLocked starts the queue's worker if it has work and may run; it forgets an idle queue.
func (a *Adapter) startLocked(dest string, q *queue) {
	switch {
	case q.running || q.held:
	case len(q.items) > 0:
		q.running = true
		go a.work(dest, q)
	default:
		delete(a.out.queues, dest)
	}
}

// queueHold pauses a user's DM queue while an interaction may show one of its messages in the
// response; nothing is sent meanwhile, so no older version can overtake a newer one.
type queueHold struct {
	a        *Adapter
	user     string
	back     *outItem // a taken message the response did not show
	released bool
}

// hold pauses the user's DM queue; nil if another interaction holds it (a double click).
func (a *Adapter) hold(userID string) *queueHold {
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	dest := "dm:" + userID
	q := a.out.queues[dest]
	if q == nil {
		q = &queue{}
		a.out.queues[dest] = q
	}
	if q.held {
		return nil
	}
	q.held = true
	return &queueHold{a: a, user: userID}
}

func (h *queueHold) giveBack(it outItem) { h.back = &it }

// release ends the hold (once; a nil hold is none). A message given back goes to the front of the
// queue, unless a newer version of it is waiting.
func (h *queueHold) release() {
	if h == nil || h.released {
		return
	}
	h.released = true
	a := h.a
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	dest := "dm:" + h.user
	q := a.out.queues[dest]
	q.held = false
	if it := h.back; it != nil && !slices.ContainsFunc(q.items, func(x outItem) bool { return x.m.Key == it.m.Key }) {
		q.items = append([]outItem{*it}, q.items...)
	}
	a.startLocked(dest, q)
}

// takeHandUpdate takes the user's queued hand for a table (the queue is held), if the response
// may show it instead: in the DM message messageID that shows it (unless the user also has an
// ephemeral hand to update), or in the ephemeral hand (unless it must also go by DM).
func (a *Adapter) takeHandUpdate(userID, messageID, tableID string, ephemeral bool) (outItem, bool) {
	refused := a.dmRefused(userID)
	a.usersMu.Lock()
	h, hasHand := a.hands[userID]
	a.usersMu.Unlock()
	hasHand = hasHand && h.table == tableID && time.Since(h.at) < handTTL
	if ephemeral && !refused || !ephemeral && hasHand {
		return outItem{}, false // the hand must go two ways: the outbox does both
	}
	a.out.mu.Lock()
	defer a.out.mu.Unlock()
	q := a.out.queues["dm:"+userID]
	for j := 0; j < len(q.items); j++ {
		it := q.items[j]
		if it.m.Kind != table.KindHand || it.m.Table != tableID {
			continue
		}
		if it.m.Key == q.inflight {
			// An older version is on its way (the held queue sends nothing after it): wait a
			// moment for it, else the outbox sends this one after it.
			for wait := 0; q.inflight == it.m.Key && wait < 50; wait++ {
				a.out.mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				a.out.mu.Lock()
			}
			if q.inflight == it.m.Key {
				return outItem{}, false
			}
			j = -1 // the queue may have changed meanwhile: look again
			continue
		}
		if !ephemeral {
			a.out.cache.mu.Lock()
			rec, ok := a.out.cache.recs[it.m.Key]
			a.out.cache.mu.Unlock()
			if !ok || rec.ID != messageID {
				return outItem{}, false
			}
		}
		q.items = append(q.items[:j], q.items[j+1:]...)
		return it, true
	}
	return outItem{}, false
}

func destination(m table.Message) string {
	switch m.Target.Kind {
	case table.ToPlace:
		if m.Target.Place.Platform == Platform && m.Target.Place.Chat != "" {
			return "ch:" + m.Target.Place.Chat
		}
	case table.ToPlayer, table.ToActor:
		if id, ok := strings.CutPrefix(m.Target.Player.ID, "dc:"); ok && id != "" {
			return "dm:" + id
		}
	}
	return ""
}

// work sends a queue's messages in order until it is empty.
func (a *Adapter) work(dest string, q *queue) {
	for {
		a.out.mu.Lock()
		q.inflight = ""
		if len(q.items) == 0 || q.held {
			q.running = false
			a.startLocked(dest, q)
			a.out.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = outItem{}
		q.items = q.items[1:]
		q.inflight = it.m.Key
		a.out.mu.Unlock()
		a.sendItem(dest, it)
	}
}

// Flush waits until every queued message has been sent (or given up) and the records of edited
// messages are written to the KV, or until ctx is done.
func (a *Adapter) Flush(ctx context.Context) error {
	for {
		if a.out.pending() == 0 {
			a.writeBack()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queues)
}

func (a *Adapter) sendItem(dest string, it outItem) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("panic while sending a message", "kind", it.m.Kind, "table", it.m.Table, "panic", fmt.Sprint(p))
		}
	}()
	if ch, ok := strings.CutPrefix(dest, "ch:"); ok {
		if a.channelBlocked(ch) {
			return
		}
		err := a.retry(func() error { return a.post(ch, it) })
		switch code := restCode(err); {
		case code == discordgo.ErrCodeMissingAccess || code == discordgo.ErrCodeMissingPermissions:
			a.blockChannel(ch)
			a.log.Warn("no permission to post in a channel; not trying again for a while", "channel", ch,
				"for", blockedFor, "err", a.redact(err.Error()))
		case err != nil:
			a.log.Warn("sending to a channel failed", "channel", ch, "kind", it.m.Kind, "table", it.m.Table, "err", a.redact(err.Error()))
		}
		return
	}
	a.toUser(strings.TrimPrefix(dest, "dm:"), it)
}

// toUser sends a private message by DM; a hand also updates the user's ephemeral hand, if any.
func (a *Adapter) toUser(userID string, it outItem) {
	m := it.m
	if m.Kind == table.KindHand {
		a.editEphemeralHand(userID, m)
	}
	if a.dmRefused(userID) {
		// A hand went to the ephemeral view (if any). A notice (the turn reminder) is said in the
		// table's channel instead, pinging the player.
		if place := m.Target.Place; m.Kind == table.KindNotice && place.Platform == Platform && place.Chat != "" {
			m.Target = table.Target{Kind: table.ToPlace, Place: place}
			a.enqueue("ch:"+place.Chat, outItem{m: m, mention: userID})
		}
		return
	}
	ch, err := a.dmChannel(userID)
	if err == nil {
		err = a.retry(func() error { return a.post(ch, it) })
	}
	switch {
	case restCode(err) == discordgo.ErrCodeCannotSendMessagesToThisUser:
		a.refuseDM(userID, m)
	case err != nil:
		a.log.Warn("sending a DM failed", "user", userID, "kind", m.Kind, "table", m.Table, "err", a.redact(err.Error()))
	}
}

func (a *Adapter) dmChannel(userID string) (string, error) {
	a.usersMu.Lock()
	ch, ok := a.dmChan[userID]
	a.usersMu.Unlock()
	if ok {
		return ch, nil
	}
	var c *discordgo.Channel
	err := a.retry(func() (err error) {
		a.limit.Wait(context.Background())
		c, err = a.s.UserChannelCreate(userID)
		return err
	})
	if err != nil {
		return "", err
	}
	a.usersMu.Lock()
	a.dmChan[userID] = c.ID
	a.usersMu.Unlock()
	return c.ID, nil
}

// dmRefused reports whether the user is known to refuse DMs (remembered in the KV).
func (a *Adapter) dmRefused(userID string) bool {
	a.usersMu.Lock()
	v, ok := a.noDM[userID]
	a.usersMu.Unlock()
	if ok {
		return v
	}
	_, found, err := a.kv.Get(bucketNoDM, userID)
	if err != nil {
		a.log.Warn("reading the KV", "bucket", bucketNoDM, "err", err)
		return false
	}
	a.usersMu.Lock()
	a.noDM[userID] = found
	a.usersMu.Unlock()
	return found
}

// refuseDM remembers that the user refuses DMs, so the bot stops trying (Discord counts failed
// requests against the bot), and tells the table's channel once how that player sees their cards.
func (a *Adapter) refuseDM(userID string, m table.Message) {
	a.usersMu.Lock()
	a.noDM[userID] = true
	a.usersMu.Unlock()
	if err := a.kv.Put(bucketNoDM, userID, []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
		a.log.Warn("writing the KV", "bucket", bucketNoDM, "err", err)
	}
	a.log.Info("user refuses DMs; hands go to ephemeral replies", "user", userID)
	place := m.Target.Place
	if place.Platform != Platform || place.Chat == "" {
		return
	}
	lang := i18n.Pick(m.Lang, m.Target.Player.Locale)
	notice := table.Message{Target: table.Target{Kind: table.ToPlace, Place: place}, Kind: table.KindNotice,
		Table: m.Table, Lang: lang, Text: fmt.Sprintf(dmRefusedText(lang), i18n.T(lang, "btn.hand"))}
	a.enqueue("ch:"+place.Chat, outItem{m: notice, mention: userID})
}

// dmWorks forgets a refusal: the user has just written to the bot in private.
func (a *Adapter) dmWorks(userID string) {
	if !a.dmRefused(userID) {
		return
	}
	a.usersMu.Lock()
	a.noDM[userID] = false
	a.usersMu.Unlock()
	if err := a.kv.Delete(bucketNoDM, userID); err != nil {
		a.log.Warn("writing the KV", "bucket", bucketNoDM, "err", err)
	}
}

// blockedFor is how long the outbox leaves a channel alone where it may not post: failed
// requests count against the bot (10,000 invalid requests in 10 minutes get it banned a while).
const blockedFor = 5 * time.Minute

func (a *Adapter) blockChannel(ch string) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	a.blocked[ch] = time.Now().Add(blockedFor)
}

// channelBlocked reports whether the bot recently failed to post in the channel for lack of
// permission.
func (a *Adapter) channelBlocked(ch string) bool {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	until, ok := a.blocked[ch]
	if ok && time.Now().After(until) {
		delete(a.blocked, ch)
		return false
	}
	return ok
}

// noPermissionText tells the players why the table does not show. The catalog in core/i18n has
// no key for it yet.
func noPermissionText(lang string) string {
	switch lang {
	case "lb":
		return "⚠️ Ech däerf an dësem Kanal keng Noriichte schécken, do gesäit keen den Dësch. E Server-Admin kann mir d'Recht „Nachrichten senden“ ginn."
	case "de":
		return "⚠️ Ich darf in diesem Kanal keine Nachrichten senden, also sieht niemand den Tisch. Ein Server-Admin kann mir das Recht „Nachrichten senden“ geben."
	case "fr":
		return "⚠️ Je n'ai pas le droit d'écrire dans ce salon, personne ne voit donc la table. Un admin du serveur peut me donner la permission « Envoyer des messages »."
	}
	return "⚠️ I may not post in this channel, so nobody sees the table. A server admin can give me the “Send Messages” permission."
}

// dmRefusedText is the notice for a player whose DMs are closed. The catalog in core/i18n has no
// key for it yet, so the adapter carries it (%s is the "My hand" button's label).
func dmRefusedText(lang string) string {
	switch lang {
	case "lb":
		return "ech ka dir keng privat Noriichte schécken. Dréck op „%s“ ënnert dem Dësch, fir deng Kaarten ze gesinn a matzespillen."
	case "de":
		return "ich kann dir keine Direktnachrichten schicken. Drück unter dem Tisch auf „%s“, um deine Karten zu sehen und zu spielen."
	case "fr":
		return "je ne peux pas t'envoyer de messages privés. Appuie sur « %s » sous la table pour voir tes cartes et jouer."
	}
	return "I can't send you direct messages. Press “%s” under the table to see your cards and play."
}

// editEphemeralHand brings the user's ephemeral hand up to date, while its token lasts.
func (a *Adapter) editEphemeralHand(userID string, m table.Message) {
	a.usersMu.Lock()
	h, ok := a.hands[userID]
	if ok && time.Since(h.at) > handTTL {
		delete(a.hands, userID)
		ok = false
	}
	a.usersMu.Unlock()
	if !ok || h.table != m.Table || m.Version < h.version {
		return
	}
	content, comps := render(m, ""), components(m.Buttons)
	// discordgo puts every webhook message edit in one rate-limit bucket; this route's own
	// bucket keeps one user's edits from holding back everyone's.
	uri := discordgo.EndpointWebhookMessage(h.appID, h.token, "@original")
	_, err := a.s.RequestWithBucketID("PATCH", uri, &discordgo.WebhookEdit{Content: &content, Components: &comps,
		AllowedMentions: noMentions()}, uri)
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	if cur, ok := a.hands[userID]; ok && cur.token == h.token {
		if err != nil {
			delete(a.hands, userID) // expired or deleted: the player asks again with "My hand"
		} else if m.Version > cur.version {
			cur.version = m.Version
			a.hands[userID] = cur
		}
	}
	if err != nil {
		a.log.Debug("editing an ephemeral hand", "user", userID, "err", a.redact(err.Error()))
	}
}

// post shows a message in a channel: a new message, or for a Key the edit of the message that
// shows it (found in the KV), unless that already shows the same content or a newer version.
func (a *Adapter) post(channelID string, it outItem) error {
	m := it.m
	content, comps := render(m, it.mention), components(m.Buttons)
	if m.Key == "" {
		a.limit.Wait(context.Background())
		_, err := a.s.ChannelMessageSendComplex(channelID, a.messageSend(it, content, comps))
		return err
	}
	sum := digest(content, m.Buttons, m.Picture)
	rec, found, err := a.record(m.Key)
	if err != nil {
		return err
	}
	if found && rec.Channel == channelID {
		if m.Version < rec.Version || rec.Hash == sum {
			return nil
		}
		edit := discordgo.NewMessageEdit(channelID, rec.ID)
		edit.Content, edit.Components, edit.AllowedMentions = &content, &comps, mentions(it.mention)
		if files := a.picture(m); files != nil {
			edit.Files, edit.Attachments = files, &[]*discordgo.MessageAttachment{}
		}
		a.limit.Wait(context.Background())
		_, err := a.s.ChannelMessageEditComplex(edit)
		if err == nil {
			return a.putRecord(m.Key, record{Channel: channelID, ID: rec.ID, Version: m.Version, Hash: sum}, false)
		}
		if c := restCode(err); c != discordgo.ErrCodeUnknownMessage {
			return err
		}
		// Someone deleted the message: show it anew.
	}
	a.limit.Wait(context.Background())
	msg, err := a.s.ChannelMessageSendComplex(channelID, a.messageSend(it, content, comps))
	if err != nil {
		return err
	}
	return a.putRecord(m.Key, record{Channel: channelID, ID: msg.ID, Version: m.Version, Hash: sum}, true)
}

func (a *Adapter) messageSend(it outItem, content string, comps []discordgo.MessageComponent) *discordgo.MessageSend {
	return &discordgo.MessageSend{Content: content, Components: comps, Files: a.picture(it.m), AllowedMentions: mentions(it.mention)}
}

// msgCache holds the records of editable messages. A new message's record goes to the KV at
// once (its ID must survive a crash, or the message would be posted twice); an edit only changes
// memory and is written back by Flush, or when the cache grows large. Every KV write is a
// transaction (two fsyncs on bbolt) that would otherwise compete with the service's commits on
// every edit. A crash loses only content hashes: after it, Resume edits each message once.
type msgCache struct {
	mu    sync.Mutex
	recs  map[string]record
	dirty map[string]bool
}

// maxCached bounds the records kept in memory; beyond it they are written back and dropped.
const maxCached = 4096

func (a *Adapter) record(key string) (record, bool, error) {
	c := &a.out.cache
	c.mu.Lock()
	rec, ok := c.recs[key]
	c.mu.Unlock()
	if ok {
		return rec, true, nil
	}
	b, found, err := a.kv.Get(bucketMessages, key)
	if err != nil || !found {
		return rec, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		a.log.Warn("unreadable message record; sending anew", "key", key, "err", err)
		return rec, false, nil
	}
	c.mu.Lock()
	if _, ok := c.recs[key]; !ok {
		c.recs[key] = rec
	}
	c.mu.Unlock()
	return rec, true, nil
}

// putRecord remembers what a message shows; durable writes it to the KV now.
func (a *Adapter) putRecord(key string, rec record, durable bool) error {
	c := &a.out.cache
	c.mu.Lock()
	c.recs[key] = rec
	if !durable {
		c.dirty[key] = true
	} else {
		delete(c.dirty, key)
	}
	n := len(c.recs)
	c.mu.Unlock()
	if durable {
		b, _ := json.Marshal(rec)
		if err := a.kv.Put(bucketMessages, key, b); err != nil {
			return err
		}
	}
	if n > maxCached {
		a.writeBack()
	}
	return nil
}

// writeBack writes the edited records to the KV and, if the cache is large, drops the clean ones.
func (a *Adapter) writeBack() {
	c := &a.out.cache
	c.mu.Lock()
	todo := make(map[string]record, len(c.dirty))
	for k := range c.dirty {
		todo[k] = c.recs[k]
	}
	clear(c.dirty)
	c.mu.Unlock()
	for k, rec := range todo {
		b, _ := json.Marshal(rec)
		if err := a.kv.Put(bucketMessages, k, b); err != nil {
			a.log.Warn("writing the KV", "bucket", bucketMessages, "err", err)
			c.mu.Lock()
			c.dirty[k] = true
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	if len(c.recs) > maxCached {
		for k := range c.recs {
			if !c.dirty[k] {
				delete(c.recs, k)
			}
		}
	}
	c.mu.Unlock()
}

// picture renders the message's picture as a PNG attachment, if a renderer is configured.
func (a *Adapter) picture(m table.Message) []*discordgo.File {
	if a.cfg.Picture == nil || m.Picture == table.PictureNone {
		return nil
	}
	png, err := a.cfg.Picture(m)
	if err != nil || len(png) == 0 {
		a.log.Warn("rendering a picture; sending text only", "picture", m.Picture, "table", m.Table, "err", err)
		return nil
	}
	return []*discordgo.File{{Name: string(m.Picture) + ".png", ContentType: "image/png", Reader: bytes.NewReader(png)}}
}

// retry runs fn again after network errors and server errors (5xx), a few times with backoff.
// discordgo itself waits out 429s and retries 502s.
func (a *Adapter) retry(fn func() error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(250<<attempt) * time.Millisecond)
		}
		if err = fn(); err == nil || !transient(err) {
			return err
		}
	}
	return err
}

func transient(err error) bool {
	var re *discordgo.RESTError
	if errors.As(err, &re) {
		return re.Response != nil && re.Response.StatusCode >= http.StatusInternalServerError
	}
	var ue *url.Error // the request failed on the way: connection refused, reset, timeout
	return errors.As(err, &ue)
}

// restCode gives Discord's JSON error code of a REST error, or 0.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// render gives a message's text as Discord shows it: the title in bold, Markdown escaped (the
// stripe tallies "||||" would otherwise be spoilers), at most 2,000 characters.
func render(m table.Message, mention string) string {
	var b strings.Builder
	if mention != "" {
		b.WriteString("<@" + mention + "> ")
	}
	if m.Title != "" {
		b.WriteString("**" + escape(m.Title) + "**\n")
	}
	b.WriteString(escape(slashCommands.Replace(m.Text)))
	return truncate(b.String(), maxContent)
}

// slashCommands rewrites the service's "/join" into Discord's "/km join": on Discord every verb
// is a subcommand of /km.
var slashCommands = func() *strings.Replacer {
	var pairs []string
	for _, v := range table.Verbs {
		pairs = append(pairs, "/"+string(v), "/km "+string(v))
	}
	return strings.NewReplacer(pairs...)
}()

var markdown = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`)

func escape(s string) string { return markdown.Replace(s) }

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

func mentions(userID string) *discordgo.MessageAllowedMentions {
	m := noMentions()
	if userID != "" {
		m.Users = []string{userID}
	}
	return m
}

// components lays buttons out in Discord's action rows: at most 5 buttons a row (a longer row is
// split into even parts: 6 cards make two rows of 3) and at most 5 rows.
func components(rows [][]table.Button) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	for _, row := range rows {
		parts := (len(row) + maxPerRow - 1) / maxPerRow
		for p := 0; p < parts; p++ {
			lo, hi := p*len(row)/parts, (p+1)*len(row)/parts
			var btns []discordgo.MessageComponent
			for _, b := range row[lo:hi] {
				btns = append(btns, discordgo.Button{Label: truncate(b.Label, 80), Style: buttonStyle(b.Style),
					CustomID: b.Action.Encode()})
			}
			out = append(out, discordgo.ActionsRow{Components: btns})
		}
	}
	if len(out) > maxRows {
		out = out[:maxRows]
	}
	return out
}

func buttonStyle(s table.ButtonStyle) discordgo.ButtonStyle {
	switch s {
	case table.StyleSecondary:
		return discordgo.SecondaryButton
	case table.StyleDanger:
		return discordgo.DangerButton
	case table.StyleSuccess:
		return discordgo.SuccessButton
	}
	return discordgo.PrimaryButton
}

// digest fingerprints what a message shows, to skip edits that would change nothing. Button
// sequence numbers are left out, as the service does: a button stays valid until its presser
// acts, so a message whose only change is newer sequence numbers need not be edited.
func digest(content string, rows [][]table.Button, pic table.Picture) string {
	h := fnv.New64a()
	io.WriteString(h, content)
	io.WriteString(h, "\x00"+string(pic))
	for _, row := range rows {
		io.WriteString(h, "\x01")
		for _, b := range row {
			a := b.Action
			fmt.Fprintf(h, "\x02%s\x03%d\x03%s\x03%s\x03%s", b.Label, b.Style, a.Verb, a.Table, a.Arg)
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
