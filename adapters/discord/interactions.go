package discord

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// adminPermissions make a member an administrator of the table in their server.
const adminPermissions = discordgo.PermissionAdministrator | discordgo.PermissionManageGuild | discordgo.PermissionManageChannels

// doneText answers a slash command that changed the table and has nothing to say to the actor
// (the table's public message shows the change).
const doneText = "✅"

// ephemeralHand is a hand shown as an ephemeral reply; the outbox keeps it up to date by editing
// the interaction's original response, which Discord allows while the token lasts.
type ephemeralHand struct {
	appID, token string
	rest         *discordgo.Session // the session of the token's generation
	table        string
	version      uint64
	at           time.Time
	answered     time.Time // when its HTTP answer was written (see untilTaken); zero over the gateway
}

// handTTL is how long an ephemeral hand is edited: a little less than its token lasts.
func (a *Adapter) handTTL() time.Duration { return a.tokens.life * 14 / 15 }

// onInteraction handles one interaction. discordgo runs each in its own goroutine.
// ans is where the first answer goes when the interaction came by HTTP; nil: over the gateway,
// answered at its callback route.
func (a *Adapter) onInteraction(i *discordgo.Interaction, x interactionExtras, ans *httpAnswer) {
	a.traffic.Heard(time.Now())
	if age := a.clock.age(i.ID); age > answerWindow {
		// Replayed after a reconnect, its window long past: its user saw it fail.
		a.log.Info("interaction older than its answer window (replayed after a reconnect?): not applied",
			"interaction", i.ID, "type", int(i.Type), "age", age.Round(time.Millisecond))
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.refuseClosing(i, ans)
		return
	}
	a.inflight.Add(1)
	a.mu.Unlock()
	defer a.inflight.Done()

	start := time.Now()
	ctx, cancel := context.WithCancel(a.baseContext())
	defer cancel() // as net/http ends a request's context when its handler returns
	r := &responder{a: a, ctx: ctx, i: i, rest: a.tokens.get(), http: ans, x: x, component: i.Type == discordgo.InteractionMessageComponent, start: start}
	defer func() {
		a.log.Debug("interaction", "id", i.ID, "type", int(i.Type), "took", time.Since(start), "handle", r.handled)
	}()
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("panic while handling an interaction", "interaction", i.ID, "panic", a.redact(fmt.Sprint(p)),
				"stack", string(debug.Stack()))
			if i.Type != discordgo.InteractionApplicationCommandAutocomplete {
				r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(i18n.Pick(string(i.Locale)), "err.internal")}})
			}
		}
	}()
	if u := userOf(i); u != nil && isPrivate(i) {
		a.reach.Set(ctx, u.ID, false) // the user talks to the bot in private: DMs reach them
	}
	if i.GuildID != "" {
		a.seeChannel(i.ChannelID, i.AppPermissions, x)
		a.probe(i.ChannelID) // a paused channel that this interaction shows may be back is tried again
		if i.Type != discordgo.InteractionApplicationCommandAutocomplete {
			a.usersMu.Lock()
			a.actors[i.ChannelID] = r
			a.usersMu.Unlock()
		}
		if !a.memberHere(i) {
			if i.Type != discordgo.InteractionApplicationCommandAutocomplete {
				lang := i18n.Pick(string(i.Locale))
				r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(lang, "discord.add_me", InviteURL(a.applicationID(), i.GuildID))}})
			}
			return
		}
	}
	switch i.Type {
	case discordgo.InteractionApplicationCommand:
		a.onCommand(r, i)
	case discordgo.InteractionMessageComponent:
		a.onComponent(r, i)
	case discordgo.InteractionApplicationCommandAutocomplete:
		a.onAutocomplete(r, i)
	}
}

// memberHere reports whether the bot is a member of the interaction's server. Commands can come
// from a server the bot is not in: from a user who installed the app to their account (the
// interaction's authorizing_integration_owners then lacks the server install, key "0":
// developer docs, Interactions: Authorizing Integration Owners Object), or from a server that
// added the app's commands without its bot, whose app_permissions are @everyone's cut to what
// interaction answers can use (Change Log, 2022-06-29). Either way the bot cannot show a table.
func (a *Adapter) memberHere(i *discordgo.Interaction) bool {
	if _, ok := i.AuthorizingIntegrationOwners[discordgo.ApplicationIntegrationGuildInstall]; !ok && len(i.AuthorizingIntegrationOwners) > 0 {
		return false
	}
	return i.AppPermissions&^responsePermissions != 0
}

func (a *Adapter) refuseClosing(i *discordgo.Interaction, ans *httpAnswer) {
	if i.Type == discordgo.InteractionApplicationCommandAutocomplete {
		return
	}
	r := &responder{a: a, ctx: a.baseContext(), i: i, rest: a.tokens.get(), http: ans,
		component: i.Type == discordgo.InteractionMessageComponent}
	r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(i18n.Pick(string(i.Locale)), "err.shutting_down")}})
}

func userOf(i *discordgo.Interaction) *discordgo.User {
	if i.Member != nil && i.Member.User != nil {
		return i.Member.User
	}
	return i.User
}

// actorOf is who sent the interaction, from the interaction itself (never from button data).
func actorOf(i *discordgo.Interaction) (p api.Player, admin, ok bool) {
	u := userOf(i)
	if u == nil || u.ID == "" {
		return api.Player{}, false, false
	}
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	if i.Member != nil {
		if i.Member.Nick != "" {
			name = i.Member.Nick // the name the server shows
		}
		admin = i.Member.Permissions&adminPermissions != 0
	}
	return api.Player{ID: "dc:" + u.ID, Name: name, Locale: string(i.Locale)}, admin, true
}

func placeOf(i *discordgo.Interaction) api.Place {
	p := api.Place{Platform: Platform, Chat: i.ChannelID}
	if i.GuildID != "" {
		p.Title = "<#" + i.ChannelID + ">" // Discord shows a channel mention as the channel's name
	}
	return p
}

// isPrivate reports whether the interaction comes from the user's DM with the bot.
func isPrivate(i *discordgo.Interaction) bool {
	return i.GuildID == "" && i.Context != discordgo.InteractionContextPrivateChannel
}

func (a *Adapter) onCommand(r *responder, i *discordgo.Interaction) {
	actor, admin, ok := actorOf(i)
	lang := i18n.Pick(string(i.Locale))
	data := i.ApplicationCommandData()
	if data.CommandType == commandEntryPoint {
		// The app's Entry Point command with the handler APP_HANDLER: "the app handles the
		// interaction using an interaction token" (developer docs, Application Commands, Entry
		// Point Command Handler Types), here by launching the Activity (the web table).
		if a.activityOn() {
			a.launch(r)
		} else {
			r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(lang, "web.no_activity")}})
		}
		return
	}
	if !ok || data.Name != CommandName || len(data.Options) == 0 {
		r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(lang, "err.unknown_verb", data.Name)}})
		return
	}
	sub := data.Options[0]
	if sub.Type == discordgo.ApplicationCommandOptionSubCommandGroup && len(sub.Options) == 1 {
		sub = sub.Options[0] // /km league top: the verb is the group's subcommand
	}
	verb, ok := api.ParseVerb(sub.Name)
	if !ok {
		r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(lang, "err.unknown_verb", sub.Name)}})
		return
	}
	if why := r.notShown(lang); verb == api.VerbNew && why != "" {
		// A table nobody could see: say why instead of opening it.
		r.answer([]api.Message{{Kind: api.KindError, Text: why}})
		return
	}
	cmd := api.Command{Place: placeOf(i), Actor: actor, Verb: verb, Args: argsFor(verb, sub.Options),
		EventID: "dc:" + i.ID, Admin: admin, Private: isPrivate(i)}
	replies := a.handle(r, cmd)
	opened := verb == api.VerbNew && !slices.ContainsFunc(replies, func(m api.Message) bool { return m.Kind == api.KindError })
	if opened && i.GuildID != "" {
		r.mu.Lock()
		r.opened = a.Service().TableAt(cmd.Place)
		refused := r.unseen // the lobby was refused already
		r.mu.Unlock()
		if refused {
			a.closeUnseen(r)
		}
	}
	if opened && i.GuildID != "" && i.AppPermissions&permAttachFiles == 0 {
		replies = append(replies, api.Message{Kind: api.KindNotice,
			Text: i18n.T(lang, "discord.no_pictures", permissionNames(lang, []int64{permAttachFiles}))})
	}
	if r.answer(replies) && verb == api.VerbHand {
		a.rememberHandReply(r, replies)
	}
}

func (a *Adapter) onComponent(r *responder, i *discordgo.Interaction) {
	actor, admin, ok := actorOf(i)
	if strings.HasPrefix(i.MessageComponentData().CustomID, appButton) && a.activityOn() {
		a.launch(r)
		return
	}
	act, err := api.ParseAction(i.MessageComponentData().CustomID)
	if !ok || err != nil {
		r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(i18n.Pick(string(i.Locale)), "err.stale")}})
		return
	}
	cmd := act.Command(placeOf(i), actor, "dc:"+i.ID, isPrivate(i))
	cmd.Admin = admin
	var hold *outbox.Hold[extra]
	if u := userOf(i); i.Message != nil && (act.Verb == api.VerbPlay || act.Verb == api.VerbTrump || act.Verb == api.VerbAnnounce) {
		// The move will change the presser's hand: keep it in their queue until the answer can
		// show it in the message that was pressed.
		hold = a.out.Hold("dm:" + u.ID)
		defer hold.Release()
	}
	replies := a.handle(r, cmd)
	if len(replies) == 0 && hold != nil && a.updateInPlace(r, i, act, hold) {
		return
	}
	hold.Release()
	original := r.answer(replies)
	switch {
	case original && act.Verb == api.VerbHand:
		a.rememberHandReply(r, replies)
	case original && len(replies) == 0 && i.Message != nil && i.Message.Flags&discordgo.MessageFlagsEphemeral != 0:
		// A move from an ephemeral hand: this interaction's original is that hand too.
		a.rememberHand(r, act.Table, act.Seq)
	}
}

// updateInPlace answers a move made from a hand message (in DMs or ephemeral) by updating that
// message with the hand the move produced (response type 7), taken from the user's held queue:
// the player sees the result at once, and the outbox saves an edit. It reports whether it did.
func (a *Adapter) updateInPlace(r *responder, i *discordgo.Interaction, act api.Action, hold *outbox.Hold[extra]) bool {
	ephemeral := i.Message.Flags&discordgo.MessageFlagsEphemeral != 0
	u := userOf(i)
	it, ok := a.takeHandUpdate(hold, u.ID, i.Message.ID, act.Table, ephemeral)
	if !ok {
		return false
	}
	m := it.Msg
	shown := r.update(render(m, ""), components(m.Buttons))
	switch {
	case shown && ephemeral:
		a.rememberHand(r, m.Table, m.Version)
	case shown:
		a.editAfterAnswer(r, i.Message.ID)
		a.out.Shown(it.Key, outbox.Record{Chat: i.ChannelID, ID: i.Message.ID, Version: it.Version, Sum: it.Sum})
	default:
		hold.GiveBack(it) // the outbox sends it after all
	}
	hold.Release()
	return shown
}

// handle runs the command; if the service takes longer than AckAfter since the interaction was
// made, it is acknowledged meanwhile so it does not fail, and the answer follows.
func (a *Adapter) handle(r *responder, cmd api.Command) []api.Message {
	t := time.AfterFunc(max(a.cfg.AckAfter-a.clock.age(r.i.ID), 0), r.deferNow)
	defer t.Stop()
	start := time.Now()
	defer func() { r.handled = time.Since(start) }()
	// A command that could not be done is said so in its replies; Discord delivers no
	// interaction twice, so its error asks nothing more of the adapter (the service logged it).
	replies, _ := a.Service().Handle(r.ctx, cmd)
	return replies
}

// rememberHandReply notes the interaction whose original response is the actor's hand.
func (a *Adapter) rememberHandReply(r *responder, replies []api.Message) {
	for _, m := range replies {
		if m.Kind == api.KindReply && m.Table != "" {
			a.rememberHand(r, m.Table, m.Version)
			return
		}
	}
}

// The adapter learns of an ephemeral hand only once its answer is out, and the outbox may have
// had a newer hand meanwhile, which found no ephemeral hand to edit: that one is queued again,
// to edit it now (in the user's queue, so the edits keep their order).
func (a *Adapter) rememberHand(r *responder, tableID string, version uint64) {
	i := r.i
	u := userOf(i)
	if u == nil || i.Token == "" || i.AppID == "" {
		return
	}
	h := ephemeralHand{appID: i.AppID, token: i.Token, rest: r.rest, table: tableID, version: version, at: time.Now(),
		answered: r.answered}
	a.usersMu.Lock()
	a.hands[u.ID] = h
	newer, ok := a.lastHand[u.ID]
	a.usersMu.Unlock()
	a.shareHand(u.ID, h)
	if ok && newer.m.Table == tableID && newer.m.Version > version {
		a.out.Enqueue(&item{Dest: "dm:" + u.ID, Msg: newer.m, Version: newer.m.Version, Data: extra{ephemeral: true}})
	}
}

// onAutocomplete offers the caller's legal cards for /km play, filtered by what they typed.
func (a *Adapter) onAutocomplete(r *responder, i *discordgo.Interaction) {
	choices := []*discordgo.ApplicationCommandOptionChoice{}
	data := i.ApplicationCommandData()
	if data.Name == CommandName && len(data.Options) == 1 && data.Options[0].Name == string(api.VerbPlay) {
		typed := ""
		for _, o := range data.Options[0].Options {
			if o.Focused {
				typed = optionString(o)
			}
		}
		for _, c := range a.legalCards(r.ctx, i) {
			if matches(typed, c.label, c.value) && len(choices) < 25 {
				choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: c.label, Value: c.value})
			}
		}
	}
	// Built by hand: discordgo omits an empty choices list, which Discord refuses.
	body := struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data struct {
			Choices []*discordgo.ApplicationCommandOptionChoice `json:"choices"`
		} `json:"data"`
	}{Type: discordgo.InteractionApplicationCommandAutocompleteResult}
	body.Data.Choices = choices
	if err := r.respondJSON(body); err != nil {
		a.log.Warn("answering autocomplete", "interaction", i.ID, "err", a.redact(err.Error()))
	}
}

type cardChoice struct{ label, value string }

// legalCards are the cards the caller may play now: from the service's Turn query for the
// channel's table, else (in a DM, or a service without the query) from the caller's hand, whose
// playable card buttons are marked Legal.
func (a *Adapter) legalCards(ctx context.Context, i *discordgo.Interaction) []cardChoice {
	actor, admin, ok := actorOf(i)
	if !ok {
		return nil
	}
	var out []cardChoice
	svc := a.Service()
	if id := svc.TableAt(placeOf(i)); id != "" {
		who, legal, trump := svc.Turn(id)
		if who == actor.ID && !trump {
			for _, c := range legal {
				// Named as the caller's language writes it (D♠ in de), as the chat does.
				out = append(out, cardChoice{i18n.Card(i18n.Pick(string(i.Locale)), c), c.String()})
			}
		}
		return out
	}
	replies, _ := svc.Handle(ctx, api.Command{Place: placeOf(i), Actor: actor, // a refusal offers no card
		Verb: api.VerbHand, Admin: admin, Private: isPrivate(i)})
	for _, m := range replies {
		for _, row := range m.Buttons {
			for _, b := range row {
				if b.Action.Verb == api.VerbPlay && b.Legal {
					out = append(out, cardChoice{b.Label, b.Action.Arg})
				}
			}
		}
	}
	return out
}

func matches(typed, label, value string) bool {
	typed = strings.TrimSpace(typed)
	if typed == "" {
		return true
	}
	if c, err := i18n.ParseCard(typed); err == nil && c.String() == value {
		return true
	}
	low := strings.ToLower(typed)
	return strings.Contains(strings.ToLower(label), low) || strings.HasPrefix(strings.ToLower(value), low)
}

// responder answers one interaction once: at once, or deferred and then completed.
type responder struct {
	a         *Adapter
	ctx       context.Context // the interaction's, derived from Run's; ended when its handler returns
	i         *discordgo.Interaction
	rest      *discordgo.Session // the session of the token's generation
	http      *httpAnswer        // the HTTP request the interaction came in, if it did
	x         interactionExtras
	component bool
	start     time.Time
	handled   time.Duration // how long the service took

	mu       sync.Mutex
	deferred bool
	done     bool
	bare     bool     // the answer was the bare confirmation (doneText)
	opened   string   // the table this /km new opened
	unseen   bool     // the channel refused a new message: a table opened there cannot show
	closed   bool     // the table opened was closed, nobody seeing it
	told     []string // notices about the channel the actor was given, or is to be given

	// answered is when the HTTP answer (or deferral) was written; zero over the gateway.
	answered time.Time
}

// notShown says why the bot cannot show a table in the interaction's channel, or ""; nothing
// outside a server.
func (r *responder) notShown(lang string) string {
	if r.i.GuildID == "" || !r.a.memberHere(r.i) {
		return ""
	}
	return r.a.whyNotShown(r.i.ChannelID, lang)
}

// closeUnseen closes the table the actor's /km new opened, once: its channel refused the lobby,
// so nobody could see it (as /km new opens none where the bot is known to be unable to post).
// It stops it as its opener would, and what the table's channel was still to get goes: nobody is
// to see a closed table's lobby later. It may run after the interaction's handler (an outbox
// worker learns of the refusal), so within Run's context.
func (a *Adapter) closeUnseen(r *responder) {
	r.mu.Lock()
	id := r.opened
	if id == "" || r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	actor, admin, ok := actorOf(r.i)
	if !ok {
		return
	}
	// A stop that could not be stored is refused in its replies too (KindError).
	replies, _ := a.Service().Handle(a.baseContext(), api.Command{Place: placeOf(r.i), Table: id, Actor: actor,
		Verb: api.VerbStop, EventID: "dc:" + r.i.ID + "/unseen", Admin: admin})
	for _, m := range replies {
		if m.Kind == api.KindError {
			a.log.Warn("a table its channel refused to show could not be closed", "table", id, "channel", r.i.ChannelID,
				"reason", m.Reason)
			return
		}
	}
	dest := "ch:" + r.i.ChannelID
	n := a.out.Discard(func(it *item) bool { return it.Dest == dest && it.Msg.Table == id })
	a.log.Info("closed a table its channel refused to show", "table", id, "channel", r.i.ChannelID, "dropped", n)
}

// actorFresh is how long after an interaction a refusal in its channel is told to its actor:
// the outbox posts what an interaction changed within moments.
const actorFresh = time.Minute

// tellActor tells the one who acted last in a guild channel, if just now, a notice about it (in
// their language): as part of the answer if it is still to come, else by replacing the bare ✅ of
// a command, else in a follow-up only they see. unseen says the channel refused a new message:
// a table their /km new opened there cannot show, and is closed. It reports whether someone is
// told.
func (a *Adapter) tellActor(ch string, notice func(lang string) string, unseen bool) bool {
	a.usersMu.Lock()
	r := a.actors[ch]
	a.usersMu.Unlock()
	if r == nil || time.Since(r.start) > actorFresh {
		return false
	}
	text := notice(i18n.Pick(string(r.i.Locale)))
	if text == "" {
		return false
	}
	r.mu.Lock()
	if slices.Contains(r.told, text) {
		r.mu.Unlock()
		return true
	}
	r.told = append(r.told, text)
	r.unseen = r.unseen || unseen
	err := r.tell(text)
	closeIt := r.opened != "" && r.unseen
	r.mu.Unlock()
	if closeIt {
		a.closeUnseen(r)
	}
	if err != nil {
		a.log.Warn("telling the actor about a refusal", "interaction", r.i.ID, "err", a.redact(err.Error()))
	}
	return err == nil
}

// tell gives the actor a notice after their answer: in place of a confirmation that turned out
// wrong (the bare ✅, or "table opened" where nobody can see it), else in a follow-up only they
// see. Before the answer there is nothing to do: answer adds r.told (r.mu held).
func (r *responder) tell(text string) error {
	if !r.done {
		return nil
	}
	content, i := render(api.Message{Text: text}, ""), r.i
	ctx := r.a.baseContext()
	if r.bare || r.opened != "" && r.unseen {
		return untilTaken(ctx, r.answered, func() error {
			return editOriginal(ctx, r.rest, i.AppID, i.Token, &discordgo.WebhookEdit{Content: &content, AllowedMentions: noMentions()})
		})
	}
	return untilTaken(ctx, r.answered, func() error {
		_, err := r.rest.FollowupMessageCreate(i, true, &discordgo.WebhookParams{Content: content, Components: []discordgo.MessageComponent{},
			Flags: discordgo.MessageFlagsEphemeral | noPreviews, AllowedMentions: noMentions()})
		return err
	})
}

// editOriginal edits an interaction's original response, with SUPPRESS_EMBEDS like every other
// message (see noPreviews): a deferred answer can set no other flag than EPHEMERAL (developer
// docs, Interactions: Interaction Response Object, Messages), so its edit sets it. discordgo
// v0.29.0's WebhookEdit has no flags; Edit Webhook Message takes them. The route's own rate-limit
// bucket keeps one token's edits from holding back everyone's (discordgo puts every webhook
// message edit without files in one).
func editOriginal(ctx context.Context, rest *discordgo.Session, appID, token string, e *discordgo.WebhookEdit) error {
	body := struct {
		*discordgo.WebhookEdit
		Flags discordgo.MessageFlags `json:"flags"`
	}{e, noPreviews}
	uri := discordgo.EndpointWebhookMessage(appID, token, "@original")
	if len(e.Files) == 0 {
		_, err := rest.RequestWithBucketID("PATCH", uri, body, uri, discordgo.WithContext(ctx))
		return err
	}
	contentType, data, err := discordgo.MultipartBodyWithJSON(body, e.Files)
	if err != nil {
		return err
	}
	_, err = rest.RequestRaw("PATCH", uri, contentType, data, uri, 0, discordgo.WithContext(ctx))
	return err
}

// respond sends the interaction's first answer: in the HTTP response when it came by HTTP, else
// to its callback route (POST /interactions/{id}/{token}/callback).
func (r *responder) respond(resp *discordgo.InteractionResponse) error {
	if r.http == nil {
		return r.rest.InteractionRespond(r.i, resp)
	}
	var files []*discordgo.File
	if resp.Data != nil {
		files = resp.Data.Files
	}
	b, err := encodeResponse(resp, files)
	if err != nil {
		return err
	}
	return r.delivered(r.http.deliver(b))
}

// delivered notes when the HTTP answer was written (err is the writing's result).
func (r *responder) delivered(err error) error {
	if err == nil {
		r.answered = time.Now()
	}
	return err
}

// Discord takes an interaction's HTTP answer a moment after the response has ended, not as it
// ends ("Interaction tokens are valid for 15 minutes" from when it is processed; developer docs,
// Interactions: Receiving and Responding): until then a webhook call on the interaction's token
// (a follow-up, an edit or a read of @original) is answered 404 with code 10015, Unknown Webhook
// (developer docs, Topics: Opcodes and Status Codes), as for a token it never saw. Over the
// gateway the callback's own answer (204) says the answer was taken. So a webhook call made just
// after an HTTP answer that meets Unknown Webhook is tried again, at growing intervals, until
// takeWithin has passed since the answer was written: the answer it follows is not lost, and
// nothing waits on a read of @original first.
const takeWithin = 3 * time.Second

// untilTaken makes a webhook call on the token of an interaction answered by HTTP at answered
// (zero: over the gateway, nothing to wait for), trying again while Discord has not taken the
// answer yet. It gives the last call's error.
func untilTaken(ctx context.Context, answered time.Time, call func() error) error {
	wait := 10 * time.Millisecond
	for {
		err := call()
		if answered.IsZero() || restCode(err) != discordgo.ErrCodeUnknownWebhook || time.Since(answered)+wait > takeWithin {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 400*time.Millisecond)
	}
}

// answeredMessage is a DM message an interaction's HTTP answer updated (type 7): the interaction's
// token and when the answer was written.
type answeredMessage struct {
	appID, token string
	rest         *discordgo.Session
	answered     time.Time
}

// editAfterAnswer notes, for a move answered by HTTP by updating the pressed hand in the
// player's DMs, that the hand's next edit goes by the interaction's webhook (Edit Original
// Interaction Response, whose @original is the message a type 7 answer updated): an edit by the
// channel route could reach Discord before it takes the answer, and the answer, taken after,
// would show the older hand. The webhook route cannot overtake the answer: before Discord takes
// it the call meets Unknown Webhook and is tried again (untilTaken). Over the gateway the answer
// was taken when the callback returned.
func (a *Adapter) editAfterAnswer(r *responder, messageID string) {
	if r.http == nil || r.answered.IsZero() {
		return
	}
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	for id, m := range a.answeredMsgs { // a hand never edited again (the match ended) is let go
		if time.Since(m.answered) > a.handTTL() {
			delete(a.answeredMsgs, id)
		}
	}
	a.answeredMsgs[messageID] = answeredMessage{appID: r.i.AppID, token: r.i.Token, rest: r.rest, answered: r.answered}
}

// takeAnswered gives the interaction whose HTTP answer last updated a DM message, if its next
// edit is to go by that interaction's webhook (editAfterAnswer), and forgets it: one edit that
// went through shows the answer was taken.
func (a *Adapter) takeAnswered(messageID string) (answeredMessage, bool) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	m, ok := a.answeredMsgs[messageID]
	delete(a.answeredMsgs, messageID)
	return m, ok && time.Since(m.answered) < a.handTTL()
}

// respondJSON is respond for an answer discordgo's types cannot say (see onAutocomplete).
func (r *responder) respondJSON(body any) error {
	if r.http == nil {
		uri := discordgo.EndpointInteractionResponse(r.i.ID, r.i.Token)
		_, err := r.rest.RequestWithBucketID("POST", uri, body, uri)
		return err
	}
	b, err := encodeResponse(body, nil)
	if err != nil {
		return err
	}
	return r.delivered(r.http.deliver(b))
}

// deferNow acknowledges the interaction before the answer is ready: "thinking" (ephemeral) for
// a command, a deferred update for a button.
func (r *responder) deferNow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.deferred {
		return
	}
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}
	if r.component {
		resp = &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	}
	if err := r.respond(resp); err != nil {
		r.a.log.Warn("deferring an interaction", "interaction", r.i.ID, "err", r.a.redact(err.Error()))
		return
	}
	r.deferred = true
}

// update answers by replacing the message the pressed button sat on (type 7). It reports false,
// sending nothing, if the interaction was already acknowledged, or if the response failed.
func (r *responder) update(content string, comps []discordgo.MessageComponent) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.deferred {
		return false
	}
	flags := noPreviews | r.i.Message.Flags&discordgo.MessageFlagsEphemeral // an ephemeral message stays one
	err := r.respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: content, Components: comps, AllowedMentions: noMentions(), Flags: flags}})
	if err != nil {
		r.a.log.Warn("answering an interaction", "interaction", r.i.ID, "err", r.a.redact(err.Error()))
		return false
	}
	r.done = true
	return true
}

// answer sends the replies to the actor, ephemerally. A button press with nothing to say gets a
// deferred update; a command with nothing to say gets a short confirmation. It reports whether
// the replies became the interaction's original response (which can be edited later).
func (r *responder) answer(replies []api.Message) (original bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.done = true
	a, i := r.a, r.i
	lang := i18n.Pick(string(i.Locale))
	notices := slices.Clone(r.told) // what a refusal there just taught
	if r.opened != "" && r.unseen {
		replies = nil // "table opened", but nobody could see it: the notice says why not
	}
	if why := r.notShown(lang); why != "" { // the table's messages cannot show here: say why
		notices = append(notices, why)
	}
	if i.GuildID != "" && a.automodUntold(i.ChannelID) {
		notices = append(notices, i18n.T(lang, "discord.automod"))
	}
	for _, text := range notices {
		if !slices.ContainsFunc(replies, func(m api.Message) bool { return m.Text == text }) {
			replies = append(replies, api.Message{Kind: api.KindNotice, Text: text})
		}
	}
	attach := r.mayAttach()
	original, err := r.send(replies, attach)
	if restCode(err) == discordgo.ErrCodeMissingPermissions && attach {
		// app_permissions said Attach Files and Discord says otherwise: the answer goes as text,
		// which it may be sent again as, the first having been refused.
		a.log.Info("an answer with files was refused: sent as text", "interaction", i.ID)
		original, err = r.send(replies, false)
	}
	if err != nil {
		a.log.Warn("answering an interaction", "interaction", i.ID, "err", a.redact(err.Error()))
		return false
	}
	return original
}

// mayAttach reports whether the answer may carry files: where the interaction's app_permissions
// hold Attach Files, as they always do in a DM with the bot (developer docs, Interactions:
// Interaction Object). Discord refuses an answer that uploads a file without it (403, 50013),
// so such an answer goes as text, like a post in that channel.
func (r *responder) mayAttach() bool {
	return r.i.GuildID == "" || r.i.AppPermissions&permAttachFiles != 0
}

// send makes the replies the interaction's answer, with their files if attach (r.mu held).
func (r *responder) send(replies []api.Message, attach bool) (original bool, err error) {
	a := r.a
	content, comps, files := a.replyParts(replies, attach)
	if link := a.linkRow(replies); link != nil && len(comps) < maxRows {
		comps = append(comps, link...)
	}
	if content == "" && len(replies) == 0 && !r.component {
		content, r.bare = doneText, true
	}
	parts := pieces(content, maxContent)
	if original, err = r.post(parts[0], comps, files, len(replies)); err != nil {
		return original, err
	}
	// What does not fit in one message follows in more, which only the actor sees too.
	for _, more := range parts[1:] {
		if err := untilTaken(r.ctx, r.answered, func() error {
			_, err := r.rest.FollowupMessageCreate(r.i, true, &discordgo.WebhookParams{Content: more,
				Flags: discordgo.MessageFlagsEphemeral | noPreviews, AllowedMentions: noMentions()})
			return err
		}); err != nil {
			return original, err
		}
	}
	return original, nil
}

// post makes content, comps and files the interaction's answer (r.mu held); replies is how many
// messages the service answered with.
func (r *responder) post(content string, comps []discordgo.MessageComponent, files []*discordgo.File, replies int) (original bool, err error) {
	i := r.i
	switch {
	case !r.deferred && r.component && replies == 0:
		return true, r.respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate})
	case !r.deferred:
		return true, r.respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: content, Components: comps, Files: files,
				Flags: discordgo.MessageFlagsEphemeral | noPreviews, AllowedMentions: noMentions()}})
	case !r.component: // deferred command: the "thinking" message becomes the answer
		return true, untilTaken(r.ctx, r.answered, func() error {
			return editOriginal(r.ctx, r.rest, i.AppID, i.Token, &discordgo.WebhookEdit{Content: &content, Components: &comps,
				Files: files, AllowedMentions: noMentions()})
		})
	case replies > 0: // deferred button: the answer is a follow-up only the actor sees
		return false, untilTaken(r.ctx, r.answered, func() error {
			_, err := r.rest.FollowupMessageCreate(i, true, &discordgo.WebhookParams{Content: content, Components: comps,
				Files: files, Flags: discordgo.MessageFlagsEphemeral | noPreviews, AllowedMentions: noMentions()})
			return err
		})
	}
	return true, nil
}

// replyParts joins the replies for the actor into one message, with the first reply's picture or
// file if attach, else saying in words what the file would have shown.
func (a *Adapter) replyParts(replies []api.Message, attach bool) (string, []discordgo.MessageComponent, []*discordgo.File) {
	var texts []string
	var rows [][]api.Button
	var files []*discordgo.File
	for _, m := range replies {
		if !attach {
			m = a.withoutFiles(m)
		}
		texts = append(texts, renderWhole(m, "")) // send cuts it into messages that fit
		rows = append(rows, m.Buttons...)
		if files == nil && attach {
			files = a.picture(m)
		}
	}
	return strings.Join(texts, "\n\n"), components(rows), files
}

// pieces cuts text into messages of at most n characters: at a paragraph's end where one is
// within reach, else at a line's end, else (one line longer than n) inside the line.
func pieces(text string, n int) []string {
	var out []string
	for utf8.RuneCountInString(text) > n {
		head := string([]rune(text)[:n])
		cut := strings.LastIndex(head, "\n\n")
		if cut <= 0 {
			cut = strings.LastIndex(head, "\n")
		}
		if cut <= 0 {
			cut = len(head)
		}
		out = append(out, text[:cut])
		text = strings.TrimLeft(text[cut:], "\n")
	}
	return append(out, text)
}

// withoutFiles is a reply as it goes where files may not: the table's board and the league
// table say in their text what their picture shows, so they go as they are; a kept match's board
// is only named by its text, so its picture's alt text says it; a file (a match's record) cannot
// be said, so the text says why it is missing.
func (a *Adapter) withoutFiles(m api.Message) api.Message {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	lang := i18n.Pick(m.Lang)
	switch {
	case m.File != nil:
		m.Text += "\n" + i18n.T(lang, "discord.no_file", permissionNames(lang, []int64{permAttachFiles}))
	case m.Picture != api.PictureNone && m.Record != "":
		if _, alt, err := a.Service().Picture(ctx, m, false); err == nil && alt != "" {
			m.Text += "\n" + alt
		}
	}
	m.File, m.Picture = nil, api.PictureNone
	return m
}
