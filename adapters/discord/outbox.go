package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// KV buckets of the adapter.
const (
	bucketMessages = "discord.msg"  // message Key → outbox.Record (channel, message ID, version, content sum)
	bucketNoDM     = "discord.nodm" // Discord user ID → since when the user refuses DMs
	// bucketTold: "<table>/<user>" → the table's channel was told how the user, who refuses
	// DMs, sees their hand (pruned with the table).
	bucketTold = "discord.told"
)

const (
	maxContent = 2000 // Discord's limit for a message's text
	maxRows    = 5    // action rows per message
	maxPerRow  = 5    // buttons per row
)

// The adapter's messages go through the shared outbox engine (adapters/internal/outbox): one
// queue per destination — a channel ("ch:<id>") or a user's DMs ("dm:<id>") — so a rate limit on
// one channel's route holds back only that channel (discordgo waits out 429s per route bucket).
// A channel that refuses the bot is a paused destination (see toChannel). This file holds only
// what is Discord's: how to post and edit, DMs and ephemeral hands, and what its errors mean.

// item is a message on its way, with what Discord needs beyond it (extra).
type item = outbox.Item[extra]

// extra is an item's data: the Discord user ID the message may ping, and whether the item only
// brings the user's ephemeral hand up to date (it shows a hand the outbox had before the
// ephemeral hand was known: see rememberHand).
type extra struct {
	ping      string
	ephemeral bool
}

func (a *Adapter) enqueue(dest string, m api.Message, ping string) {
	sum := outbox.Digest(m)
	if ping != "" {
		sum = outbox.Digest(m, ping)
	}
	if mark := a.appMark(); mark != "" && strings.HasPrefix(dest, "ch:") {
		sum = outbox.Digest(m, ping, mark)
	}
	a.out.Enqueue(&item{Dest: dest, Msg: m, Key: m.Key, Version: m.Version, Sum: sum, Data: extra{ping: ping}})
}

// Deliver queues the service's messages; it never waits for Discord. Editable messages already
// waiting in a queue are replaced by their newer versions (latest wins).
func (a *Adapter) Deliver(ctx context.Context, msgs []api.Message) {
	a.teller.Hear(ctx) // a place's retold batch comes first (chat.Teller)
	for _, m := range msgs {
		dest := destination(m)
		if dest == "" {
			a.log.Warn("message without a Discord destination dropped", "kind", m.Kind, "table", m.Table)
			continue
		}
		a.enqueue(dest, m, "")
	}
}

// takeHandUpdate takes the user's queued hand for a table from their held DM queue, if the
// response may show it instead: in the DM message messageID that shows it (unless the user also
// has an ephemeral hand to update), or in the ephemeral hand (unless it must also go by DM).
func (a *Adapter) takeHandUpdate(h *outbox.Hold[extra], userID, messageID, tableID string, ephemeral bool) (*item, bool) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	refused := a.reach.Is(ctx, userID)
	a.usersMu.Lock()
	eh, hasHand := a.hands[userID]
	a.usersMu.Unlock()
	hasHand = hasHand && eh.table == tableID && time.Since(eh.at) < a.handTTL()
	if ephemeral && !refused || !ephemeral && hasHand {
		return nil, false // the hand must go two ways: the outbox does both
	}
	return h.Take(func(it *item) bool {
		if it.Msg.Kind != api.KindHand || it.Data.ephemeral || it.Msg.Table != tableID {
			return false
		}
		if ephemeral {
			return true
		}
		rec, ok := a.out.Record(it.Key)
		return ok && rec.ID == messageID
	})
}

func destination(m api.Message) string {
	switch m.Target.Kind {
	case api.ToPlace:
		if m.Target.Place.Platform == Platform && m.Target.Place.Chat != "" {
			return "ch:" + m.Target.Place.Chat
		}
	case api.ToPlayer, api.ToActor:
		if id, ok := strings.CutPrefix(m.Target.Player.ID, "dc:"); ok && id != "" {
			return "dm:" + id
		}
	}
	return ""
}

// Flush waits until every queued message has been sent (or given up) and the records of edited
// messages are written to the KV, or until ctx is done.
func (a *Adapter) Flush(ctx context.Context) error { return a.out.Flush(ctx) }

// platform is the adapter as the engine's outbox.Platform.
type platform struct{ a *Adapter }

// Wait keeps the outbox under its share of Discord's global rate limit.
func (p platform) Wait(ctx context.Context, _ string) error { return p.a.limit.Wait(ctx) }

// Errors Show gives instead of asking Discord, when it knows better.
var (
	// errSkip says a message was not sent on purpose (AutoMod blocked it, a DM turned into a
	// channel notice, a table nobody could see was closed).
	errSkip = errors.New("not sent")
	// errPaused says the channel refuses the bot for now (see toChannel).
	errPaused = errors.New("the channel refuses the bot's messages for now")
)

// Show posts or edits a message in a channel, or by DM, within ctx.
func (p platform) Show(ctx context.Context, it *item, rec *outbox.Record) (string, string, error) {
	a := p.a
	if ch, ok := strings.CutPrefix(it.Dest, "ch:"); ok {
		if rec != nil && rec.Chat == ch {
			a.waitHeld(ctx, it.Key)
		}
		id, err := a.toChannel(ctx, ch, it.Msg, it.Data.ping, rec)
		if err == nil {
			a.Reached(ctx, api.Place{Platform: Platform, Chat: ch}, it.Msg.Table)
			a.keepInView(it.Key, it.Msg)
		}
		return ch, id, err
	}
	user := strings.TrimPrefix(it.Dest, "dm:")
	if it.Data.ephemeral {
		a.editEphemeralHand(ctx, user, it.Msg)
		return "", "", errSkip
	}
	return a.toUser(ctx, user, it.Msg, rec)
}

// outOne tells the service that a channel shows its table's keyed message now (Service.Shown), so that
// computer players wait for it: sent, or found showing it already (outbox.Config.Out: another
// copy, or this one before a restart, showed it).
func (a *Adapter) outOne(it *item) {
	if m := it.Msg; m.Target.Kind == api.ToPlace {
		if svc := a.Service(); svc != nil {
			svc.Shown(m.Target.Place, m.Version)
		}
	}
}

// keepInView notes, for a channel's message key that shows m now, how long that content is to stay
// (Message.HoldFor: a finished trick).
func (a *Adapter) keepInView(key string, m api.Message) {
	if m.Target.Kind != api.ToPlace || key == "" {
		return
	}
	a.heldMu.Lock()
	now := time.Now()
	for k, until := range a.held { // holds past, of tables that went on elsewhere or closed
		if now.After(until) {
			delete(a.held, k)
		}
	}
	if m.HoldFor > 0 {
		a.held[key] = now.Add(m.HoldFor)
	} else {
		delete(a.held, key)
	}
	a.heldMu.Unlock()
}

// waitHeld waits, before an edit of the message key, until what it shows has been in view as
// long as its Message.HoldFor asked: a finished trick stays in the channel, with its winner, at
// least that long even when a person plays on at once. Newer versions meanwhile replace the
// queued edit (the outbox's latest wins), so the wait costs no extra edit.
func (a *Adapter) waitHeld(ctx context.Context, key string) {
	a.heldMu.Lock()
	until, ok := a.held[key]
	a.heldMu.Unlock()
	if !ok {
		return
	}
	if d := time.Until(until); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// pauseChannel has the service pause the table of a channel whose queue the outbox paused
// (outbox.Config.Paused, in the queue's worker): its players are told privately, and it goes on
// when a message reaches the channel again (Show, chat.Slot.Reached).
func (a *Adapter) pauseChannel(dest string, _ *item) {
	ch, ok := strings.CutPrefix(dest, "ch:")
	if !ok {
		return
	}
	place := api.Place{Platform: Platform, Chat: ch}
	if err := a.Service().Pause(a.baseContext(), place, true); err != nil {
		a.log.Warn("pausing a table", "channel", ch, "err", err)
	}
}

// probe has a paused channel try its waiting messages again, if what the bot knows of it says it
// may see it now (a refusal is believed for permsFresh, unless the interactions' app_permissions
// show a clear sign it changed): an interaction came from it, or the sweep found it paused.
func (a *Adapter) probe(ch string) {
	if a.may(ch, toSee) {
		a.out.ProbeNow("ch:" + ch) // nothing, unless the channel is paused
	}
}

// toChannel shows a message in a guild channel as far as the bot's permissions there allow: an
// edit of its own message needs only to see the channel, a new message also the permission to
// send one, and its picture the permission to attach files; without that the text (which holds
// the board as text) goes alone. A refusal teaches what is lacking, so the next messages of that
// kind are sent as they can be without being refused again, and the one who just acted there is
// told why the table does not show; a request that works shows what it needed is there again.
//
// A channel the bot cannot see, or where it may not post the new message its table needs, pauses
// (errPaused): its messages wait, and its table with them. Discord's own rule decides when:
// losing Send Messages stops new messages but "does not prevent existing messages from being
// updated or deleted" (a Discord engineer, discord-api-docs#3096), so a channel that loses only
// Send Messages keeps its table by editing the message it has and pauses when a new one is
// needed; a channel out of sight (View Channel lost, or a private thread the bot left) pauses at
// once.
func (a *Adapter) toChannel(ctx context.Context, ch string, m api.Message, ping string, rec *outbox.Record) (string, error) {
	edit := rec != nil && rec.Chat == ch
	switch {
	case !a.may(ch, toSee):
		return "", errPaused
	case !edit && !a.may(ch, toPost):
		a.log.Debug("no permission to post in the channel: its messages wait", "channel", ch, "kind", m.Kind)
		return "", errPaused
	}
	pictures := m.Picture != api.PictureNone && a.may(ch, toAttach)
	id, err := a.post(ctx, ch, m, ping, rec, pictures)
	if restCode(err) == discordgo.ErrCodeMissingPermissions && pictures {
		a.lacks(ch, permAttachFiles, discordgo.ErrCodeMissingPermissions)
		a.log.Info("no permission to attach files in the channel: pictures go as text", "channel", ch)
		pictures = false
		id, err = a.post(ctx, ch, m, ping, rec, false)
	}
	why := func(lang string) string { return a.whyNotShown(ch, lang) }
	switch code := restCode(err); {
	case err == nil:
		proven := int64(permViewChannel)
		if !edit {
			proven |= permSendMessages | permSendInThreads
		}
		if pictures {
			proven |= permAttachFiles
		}
		a.works(ch, proven)
	case code == discordgo.ErrCodeMissingAccess:
		a.lacks(ch, permViewChannel, code)
		a.tellActor(ch, why, !edit)
		a.log.Warn("the channel is out of the bot's sight: its messages wait and its table pauses", "channel", ch,
			"err", a.redact(err.Error()))
		return "", a.unlessClosed(m, errPaused)
	case code == discordgo.ErrCodeMissingPermissions, code == discordgo.ErrCodeThreadIsLocked:
		if !edit {
			a.lacks(ch, permSendMessages|permSendInThreads, code)
			a.tellActor(ch, why, true)
			a.log.Warn("no permission to post in the channel: its messages wait and its table pauses", "channel", ch,
				"kind", m.Kind, "err", a.redact(err.Error()))
			return "", a.unlessClosed(m, errPaused)
		}
		a.log.Warn("no permission for this edit in the channel: not sent", "channel", ch, "kind", m.Kind,
			"err", a.redact(err.Error()))
		return "", errSkip
	case code == errCodeAutoModBlocked:
		// The server's AutoMod blocks the text (a player's name, most likely): sent again as it
		// is, it would be blocked again. The message is dropped; a later version, whose text
		// differs, is tried as any message is.
		a.log.Warn("AutoMod blocked a message in the channel: dropped", "channel", ch, "kind", m.Kind, "table", m.Table,
			"edit", edit)
		if !a.tellActor(ch, func(lang string) string { return i18n.T(lang, "discord.automod") }, false) {
			a.automodBlocked(ch)
		}
		return "", errSkip
	}
	return id, err
}

// unlessClosed is err, unless the message's table is closed now (the one who opened it was told
// that nobody can see it, and it was closed): such a message is dropped, not kept for later.
func (a *Adapter) unlessClosed(m api.Message, err error) error {
	if _, live := a.Service().PlaceOf(m.Table); m.Table != "" && !live {
		return errSkip
	}
	return err
}

// errCodeAutoModBlocked is Discord's code for a message AutoMod blocked (developer docs, Opcodes
// and Status Codes: 200000, "Message was blocked by automatic moderation"), which discordgo
// v0.29.0 does not name.
const errCodeAutoModBlocked = 200000

// errCodeArchivedThread is Discord's code for an operation on an archived thread, such as an
// edit (developer docs, Opcodes and Status Codes: 50083).
const errCodeArchivedThread = 50083

// Classify reads discordgo's errors. discordgo waits out 429s itself.
func (p platform) Classify(err error) *outbox.Error {
	safe := errors.New(p.a.redact(err.Error()))
	var tooFast *dmsTooFast
	switch code := restCode(err); {
	case errors.Is(err, errSkip):
		return &outbox.Error{Class: outbox.Drop, Err: err}
	case errors.Is(err, errPaused):
		return &outbox.Error{Class: outbox.Paused, Err: err}
	case code == discordgo.ErrCodeCannotSendMessagesToThisUser, code == errCodeNoMutualGuild:
		// Closed DMs, or no server in common (a user who left every server the bot is in):
		// either way no DM reaches them, and asking again is a refused request each time.
		return &outbox.Error{Class: outbox.Forbidden, Err: safe}
	case errors.As(err, &tooFast):
		return &outbox.Error{Class: outbox.RetryAfter, After: tooFast.after, Err: safe}
	case code == discordgo.ErrCodeUnknownMessage, code == errCodeArchivedThread:
		// A message that is gone, or in an archived thread: editing fails until something is
		// posted in the thread, which unarchives it (developer docs, Threads: Active & Archived
		// Threads). Either way the table goes on in a new message.
		return &outbox.Error{Class: outbox.Gone, Err: safe}
	case transient(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &outbox.Error{Class: outbox.Transient, Err: safe} // a send cut short at shutdown is not tried again
	}
	return &outbox.Error{Class: outbox.BadRequest, Err: safe}
}

// errCodeNoMutualGuild is Discord's code for a DM to a user who shares no server with the bot
// (developer docs, Opcodes and Status Codes: 50278, "Cannot send messages to this user due to
// having no mutual guilds"), which discordgo v0.29.0 does not name.
const errCodeNoMutualGuild = 50278

// Refused handles a user who refuses DMs: remembered, so that the bot stops asking, and what was
// queued for them goes as the delivery policy says (unreached): the refused message now, the
// others through their queue again, as every message for such a user goes (a hand also to the
// ephemeral hand, in order).
func (p platform) Refused(dest string, items []*item, _ error) {
	ctx := p.a.baseContext() // the KV is the adapter's: it lives as long as Run
	a := p.a
	userID := strings.TrimPrefix(dest, "dm:")
	if items[0].Msg.Reason != api.ReasonForgotten && a.reach.Set(ctx, userID, true) { // nothing of a forgotten person is written again
		a.log.Info("a user refuses DMs; hands go to ephemeral replies") // no ID at info: docs/hosting.md, "Logs"
	}
	a.unreached(userID, items[0].Msg)
	for _, it := range items[1:] {
		a.out.Enqueue(it)
	}
}

// toUser sends a private message by DM; a hand also updates the user's ephemeral hand, if any.
func (a *Adapter) toUser(ctx context.Context, userID string, m api.Message, rec *outbox.Record) (string, string, error) {
	if m.Kind == api.KindHand {
		a.editEphemeralHand(ctx, userID, m)
	}
	if a.reach.Is(ctx, userID) {
		a.unreached(userID, m)
		return "", "", errSkip
	}
	ch, err := a.dmChannel(ctx, userID)
	if err != nil {
		return "", "", err
	}
	if rec != nil && rec.Chat == ch {
		if am, ok := a.takeAnswered(rec.ID); ok {
			// The hand a move's HTTP answer updated: edited after that answer (editAfterAnswer).
			content, comps := render(m, ""), components(m.Buttons)
			err := untilTaken(ctx, am.answered, func() error {
				return editOriginal(ctx, am.rest, am.appID, am.token, &discordgo.WebhookEdit{Content: &content, Components: &comps,
					AllowedMentions: noMentions()})
			})
			if restCode(err) != discordgo.ErrCodeUnknownWebhook {
				return ch, rec.ID, err
			}
			// Still not taken after takeWithin (or the token is gone): the hand is edited as any
			// DM is, rather than left behind.
			a.log.Info("a hand's answer was not taken in time: edited by its channel", "user", userID)
		}
	}
	id, err := a.post(ctx, ch, m, "", rec, m.Picture != api.PictureNone)
	return ch, id, err
}

// unreached is what becomes of a private message for a user who refuses DMs, as the delivery
// policy says (adapters/internal/chat): a hand reaches them through "My hand" (the ephemeral hand,
// kept up to date), and the table's channel is told so, once per user and table; a notice is said
// in the table's channel by its public form (chat.Public), pinging them; anything else goes
// nowhere.
func (a *Adapter) unreached(userID string, m api.Message) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	place := m.Target.Place
	if place.Platform != Platform || place.Chat == "" {
		return
	}
	lang := i18n.Pick(m.Lang, m.Target.Player.Locale)
	switch pub, ok := chat.Public(m); {
	case m.Kind == api.KindHand && a.reach.TellOnce(ctx, m.Table, userID):
		notice := api.Message{Target: api.Target{Kind: api.ToPlace, Place: place}, Kind: api.KindNotice,
			Table: m.Table, Lang: lang, Text: i18n.T(lang, "discord.dm_refused", i18n.T(lang, "btn.hand"))}
		a.enqueue("ch:"+place.Chat, notice, userID)
	case m.Kind == api.KindNotice && ok:
		pub.Target = api.Target{Kind: api.ToPlace, Place: place}
		a.enqueue("ch:"+place.Chat, pub, userID)
	}
}

// Discord refuses to open DM channels for a while when the bot opens them too fast (developer
// docs, Opcodes and Status Codes: 40003, "You are opening direct messages too fast"), saying
// neither how many nor how long. It is not the user's refusal: their messages wait and go
// later. The pause holds every DM queue that must open a channel, so the queues do not each ask
// again; it starts at dmOpenFirstWait and doubles while Discord keeps refusing, up to
// dmOpenMaxWait, and ends at the first channel opened.
const (
	dmOpenFirstWait = 30 * time.Second
	dmOpenMaxWait   = 10 * time.Minute
)

// dmPause is the pause on opening DM channels (a.usersMu held).
type dmPause struct {
	until time.Time
	wait  time.Duration // the last wait, doubled at the next refusal
}

// dmsTooFast is a DM not sent because DM channels may not be opened yet; after is how long.
type dmsTooFast struct{ after time.Duration }

func (e *dmsTooFast) Error() string {
	return fmt.Sprintf("opening direct messages too fast (Discord code 40003): waiting %v", e.after)
}

func (a *Adapter) dmChannel(ctx context.Context, userID string) (string, error) {
	a.usersMu.Lock()
	ch, ok := a.dmChan[userID]
	wait := time.Until(a.dmPause.until)
	a.usersMu.Unlock()
	switch {
	case ok:
		return ch, nil
	case wait > 0:
		return "", &dmsTooFast{wait}
	}
	if err := a.limit.Wait(ctx); err != nil {
		return "", err // shutting down: the engine gives the message up
	}
	c, err := a.rest.UserChannelCreate(userID, discordgo.WithContext(ctx))
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	if restCode(err) == discordgo.ErrCodeOpeningDirectMessagesTooFast {
		p := &a.dmPause
		if time.Now().After(p.until) { // not paused meanwhile by another queue
			p.wait = min(max(p.wait*2, a.dmOpenWait), dmOpenMaxWait)
			p.until = time.Now().Add(p.wait)
			a.log.Warn("Discord says DMs are opened too fast: DMs to new users wait", "for", p.wait)
		}
		return "", &dmsTooFast{time.Until(p.until)}
	}
	if err != nil {
		return "", err
	}
	a.dmPause = dmPause{}
	a.dmChan[userID] = c.ID
	return c.ID, nil
}

// editEphemeralHand brings the user's ephemeral hand up to date, while its token lasts. It
// notes the hand as the newest the user has, so that an ephemeral hand shown later, older than
// it, is brought up to date too (rememberHand).
func (a *Adapter) editEphemeralHand(ctx context.Context, userID string, m api.Message) {
	a.usersMu.Lock()
	if l, ok := a.lastHand[userID]; !ok || l.m.Table != m.Table || l.m.Version <= m.Version {
		a.lastHand[userID] = newestHand{m: m, at: time.Now()}
	}
	h, ok := a.hands[userID]
	if ok && time.Since(h.at) > a.handTTL() {
		delete(a.hands, userID)
		ok = false
	}
	a.usersMu.Unlock()
	// The user may have asked for their hand at another copy since: its token is in the KV.
	if sh, found := a.sharedHandOf(ctx, userID); found && (!ok || sh.at.After(h.at)) {
		h, ok = sh, true
		a.usersMu.Lock()
		if cur, had := a.hands[userID]; !had || sh.at.After(cur.at) {
			a.hands[userID] = sh
		}
		a.usersMu.Unlock()
	}
	if !ok || h.table != m.Table || m.Version < h.version {
		return
	}
	content, comps := render(m, ""), components(m.Buttons)
	err := untilTaken(ctx, h.answered, func() error {
		return editOriginal(ctx, h.rest, h.appID, h.token, &discordgo.WebhookEdit{Content: &content, Components: &comps,
			AllowedMentions: noMentions()})
	})
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

// newestHand is the newest hand the outbox had for a user, and when.
type newestHand struct {
	m  api.Message
	at time.Time
}

// post shows a message in a channel: the edit of the message rec names, if it is in this
// channel, else a new message; with its picture if pictures. It gives the message's ID.
func (a *Adapter) post(ctx context.Context, channelID string, m api.Message, ping string, rec *outbox.Record, pictures bool) (string, error) {
	content, comps := render(m, ping), components(m.Buttons)
	if m.Target.Kind == api.ToPlace {
		comps = a.appComponents(m)
	}
	var files []*discordgo.File
	if pictures {
		files = a.picture(m)
	}
	if rec != nil && rec.Chat == channelID {
		edit := discordgo.NewMessageEdit(channelID, rec.ID)
		edit.Content, edit.Components, edit.AllowedMentions = &content, &comps, mentions(ping)
		edit.Flags = noPreviews
		if files != nil {
			edit.Files, edit.Attachments = files, &[]*discordgo.MessageAttachment{}
		}
		if _, err := a.rest.ChannelMessageEditComplex(edit, discordgo.WithContext(ctx)); err != nil {
			return "", err
		}
		return rec.ID, nil
	}
	msg, err := a.rest.ChannelMessageSendComplex(channelID, &discordgo.MessageSend{Content: content, Components: comps,
		Files: files, AllowedMentions: mentions(ping), Flags: noPreviews}, discordgo.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return msg.ID, nil
}

// noPreviews keeps Discord from adding previews of the links in a message (embeds), which it
// does where the bot has Embed Links (developer docs, Permissions: "Links sent by users with this
// permission will be auto-embedded"): a player named after a web address would otherwise hang
// that site's card under the table. The bot sends no embeds of its own, so it needs no Embed
// Links, and where it has it nothing changes.
const noPreviews = discordgo.MessageFlagsSuppressEmbeds

// picture renders the message's picture as a PNG attachment, if a renderer is configured, and
// attaches the message's file (a match's record).
func (a *Adapter) picture(m api.Message) []*discordgo.File {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	if m.File != nil {
		return []*discordgo.File{{Name: m.File.Name, ContentType: "application/json", Reader: bytes.NewReader(m.File.Data)}}
	}
	if m.Picture == api.PictureNone {
		return nil
	}
	png, _, err := a.Service().Picture(ctx, m, false)
	if err != nil || len(png) == 0 {
		a.log.Warn("rendering a picture; sending text only", "picture", m.Picture, "table", m.Table, "err", err)
		return nil
	}
	return []*discordgo.File{{Name: string(m.Picture) + ".png", ContentType: "image/png", Reader: bytes.NewReader(png)}}
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

// render gives a message's text as Discord shows it in one message: renderWhole, cut at 2,000
// characters.
func render(m api.Message, mention string) string {
	return truncate(renderWhole(m, mention), maxContent)
}

// renderWhole gives a message's text as Discord shows it: the title in bold, Markdown escaped.
func renderWhole(m api.Message, mention string) string {
	var b strings.Builder
	if mention != "" {
		b.WriteString("<@" + mention + "> ")
	}
	if m.Title != "" {
		// A title is the catalog's words and the place's name, which on Discord is a channel
		// mention the adapter wrote (placeOf): that one stays a mention.
		b.WriteString("**" + channelMention.ReplaceAllString(escape(m.Title), "<#$1>") + "**\n")
	}
	text := escape(kmCommands(m.Text))
	// The league's texts name the place as its title does: the mention of its own channel (or
	// thread) stays one; any other a player's name holds stays escaped.
	for _, id := range []string{m.Target.Place.Chat, m.Target.Place.Thread} {
		if id != "" {
			text = strings.ReplaceAll(text, `\<#`+id+">", "<#"+id+">")
		}
	}
	b.WriteString(text)
	return b.String()
}

var channelMention = regexp.MustCompile(`\\<#([0-9]+)>`)

// kmCommands rewrites the service's "/join" into Discord's "/km join": on Discord every verb is a
// subcommand of /km. Links are left alone.
func kmCommands(text string) string {
	return i18n.RewriteCommands(text, api.Verbs, func(v api.Verb) string { return "/km " + subcommandPath(v) })
}

// escape makes a text show as written, whatever players named themselves. Discord's Markdown
// (developer docs, Reference: Message Formatting; Discord's help article on Markdown) formats
// inline (**bold**, *italic*, __underline__, ~~strike~~, `code`, ||spoiler||: the stripe tallies
// "||||" would be spoilers), links ([text](url), masked), anything in <…> (mentions of users,
// roles, channels and commands, custom emoji, timestamps <t:…>), @everyone and @here, and at the
// start of a line headings ("# ", "## ", "### "), small text ("-# "), quotes ("> ", ">>> ") and
// lists ("- ", "* ", "1. "). A backslash before any of these characters shows it as itself. A web
// address is left as it is: Discord reads it as a link before any escape, so a backslash in it
// would be part of the link and break it.
func escape(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escapeLine(l)
	}
	return strings.Join(lines, "\n")
}

// webAddress is what Discord turns into a link by itself (the autolink rule of its Markdown).
var webAddress = regexp.MustCompile(`https?://[^\s<]+[^<.,:;"')\]\s]`)

// lineStart is Markdown that works only at the start of a line, after any spaces.
var lineStart = regexp.MustCompile(`^[ \t]*(#{1,3}[ \t]|-#[ \t]|>|[-+][ \t]|[0-9]+\.[ \t])`)

func escapeLine(l string) string {
	var b strings.Builder
	if m := lineStart.FindStringSubmatchIndex(l); m != nil {
		at := m[2]
		if c := l[at]; c >= '0' && c <= '9' { // "1. ": the dot makes the list
			at = m[3] - 2
		}
		b.WriteString(l[:at] + `\`)
		l = l[at:]
	}
	last := 0
	for _, span := range webAddress.FindAllStringIndex(l, -1) {
		b.WriteString(inlineMarkdown.Replace(l[last:span[0]]))
		b.WriteString(l[span[0]:span[1]])
		last = span[1]
	}
	b.WriteString(inlineMarkdown.Replace(l[last:]))
	return b.String()
}

var inlineMarkdown = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`,
	`[`, `\[`, `]`, `\]`, `<`, `\<`, "@everyone", `\@everyone`, "@here", `\@here`)

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
func components(rows [][]api.Button) []discordgo.MessageComponent {
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

func buttonStyle(s api.ButtonStyle) discordgo.ButtonStyle {
	switch s {
	case api.StyleSecondary:
		return discordgo.SecondaryButton
	case api.StyleDanger:
		return discordgo.DangerButton
	case api.StyleSuccess:
		return discordgo.SuccessButton
	}
	return discordgo.PrimaryButton
}
