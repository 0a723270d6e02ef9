package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The web table as a Discord Activity (adapters/web). With Config.ClientSecret set, the table's
// messages get a "Play in app" button, answered with LAUNCH_ACTIVITY (developer docs,
// Interactions: Interaction Callback Type 12, "Launch the Activity associated with the app. Only
// available for apps with Activities enabled"). Discord opens the page in the channel; the page
// asks the Discord client for an OAuth2 code (the Embedded App SDK's authorize command), and
// ActivityUser turns the code into the player and the channel, on Discord's word alone: the code
// exchange with the client secret (docs: OAuth2, Authorization Code Grant), the user the token
// belongs to (GET /users/@me), and the channel the activity instance runs in, with that user among
// its participants (GET /applications/{application}/activity-instances/{instance}).

// appButton starts a "Play in app" button's custom_id; the table ID follows. It is no Action:
// nothing reaches the service.
const appButton = "kmapp|"

// activityOn reports whether the table's messages offer the Activity.
func (a *Adapter) activityOn() bool { return a.cfg.ClientSecret != "" }

// AppID is the application's ID once Run has looked it up, else "" (the web page's client_id).
func (a *Adapter) AppID() string { return a.applicationID() }

// launch answers a "Play in app" press with LAUNCH_ACTIVITY; if Discord refuses (the Activity is
// not switched on for the app), the presser is told so.
func (a *Adapter) launch(r *responder) {
	r.mu.Lock()
	if r.done || r.deferred {
		r.mu.Unlock()
		return
	}
	err := r.respond(&discordgo.InteractionResponse{Type: interactionLaunchActivity})
	if err == nil {
		r.done = true
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	a.log.Warn("launching the Activity failed: is it switched on in the developer portal?", "err", a.redact(err.Error()))
	lang := i18n.Pick(string(r.i.Locale))
	r.answer([]api.Message{{Kind: api.KindError, Text: i18n.T(lang, "web.no_activity")}})
}

// interactionLaunchActivity is the callback type discordgo v0.29.0 does not name.
const interactionLaunchActivity discordgo.InteractionResponseType = 12

// commandEntryPoint is the command type PRIMARY_ENTRY_POINT, which discordgo v0.29.0 does not
// name (developer docs, Application Commands: Application Command Types).
const commandEntryPoint discordgo.ApplicationCommandType = 4

// appComponents are a table message's buttons with a row of the web table's: when the Activity
// is on, its "Play in app" on the lobby and the live message while they have buttons; where the
// web table runs, the watch link on the message that offers it (Message.Watch).
func (a *Adapter) appComponents(m api.Message) []discordgo.MessageComponent {
	comps := components(m.Buttons)
	var row []discordgo.MessageComponent
	if a.activityOn() && m.Table != "" && len(m.Buttons) > 0 && (m.Kind == api.KindLive || m.Kind == api.KindLobby) {
		lang := i18n.Pick(m.Lang)
		row = append(row, discordgo.Button{Label: truncate(i18n.T(lang, "web.play_in_app"), 80), Style: discordgo.PrimaryButton,
			CustomID: appButton + m.Table})
	}
	if w := a.cfg.Web; w != nil && m.Watch != "" && m.Table != "" {
		row = append(row, discordgo.Button{Label: truncate(m.Watch, 80), Style: discordgo.LinkButton, URL: w.WatchLink(m.Table)})
	}
	if len(row) == 0 || len(comps) >= maxRows {
		return comps
	}
	return append(comps, discordgo.ActionsRow{Components: row})
}

// appMark is what the Activity adds to a message, for its digest.
func (a *Adapter) appMark() string {
	if a.activityOn() {
		return "app"
	}
	return ""
}

// linkRow is a row with a link button to the web table for the actor of a hand reply (one-time,
// so only for them: ephemeral).
func (a *Adapter) linkRow(replies []api.Message) []discordgo.MessageComponent {
	w := a.cfg.Web
	if w == nil {
		return nil
	}
	for _, m := range replies {
		if m.Kind != api.KindReply || !m.Secret || m.Table == "" || m.Target.Player.ID == "" {
			continue
		}
		link, err := w.Link(m.Target.Player, m.Table)
		if err != nil {
			a.log.Warn("no web table link for a hand", "err", err)
			return nil
		}
		lang := i18n.Pick(m.Lang)
		return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: truncate(i18n.T(lang, "web.open_browser"), 80), Style: discordgo.LinkButton, URL: link}}}}
	}
	return nil
}

// ErrActivityUser is ActivityUser's refusal: the code, the user or the instance did not check out.
var ErrActivityUser = errors.New("discord: the activity's user could not be confirmed")

var instanceID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,200}$`)

// ActivityUser exchanges an Activity's OAuth2 code for the user's token with the client secret,
// asks Discord who the user is, and which channel the activity instance runs in, the user being
// one of its participants. Its errors never hold the secret or a token.
func (a *Adapter) ActivityUser(ctx context.Context, code, instance string) (api.Player, api.Place, error) {
	appID := a.applicationID()
	if !a.activityOn() || appID == "" || code == "" || len(code) > 512 || !instanceID.MatchString(instance) {
		return api.Player{}, api.Place{}, ErrActivityUser
	}
	form := url.Values{"client_id": {appID}, "client_secret": {a.cfg.ClientSecret}, "grant_type": {"authorization_code"},
		"code": {code}}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		Scope       string `json:"scope"`
	}
	if err := a.call(ctx, http.MethodPost, discordgo.EndpointAPI+"oauth2/token", "", form, &tok); err != nil {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: the code exchange: %w", ErrActivityUser, err)
	}
	if tok.AccessToken == "" || !slices.Contains(strings.Fields(tok.Scope), "identify") {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: the token has no identify scope", ErrActivityUser)
	}
	var u struct {
		ID         string `json:"id"`
		Username   string `json:"username"`
		GlobalName string `json:"global_name"`
		Locale     string `json:"locale"`
		Bot        bool   `json:"bot"`
	}
	if err := a.call(ctx, http.MethodGet, discordgo.EndpointAPI+"users/@me", "Bearer "+tok.AccessToken, nil, &u); err != nil {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: who the user is: %w", ErrActivityUser, err)
	}
	if u.ID == "" || u.Bot {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: no user", ErrActivityUser)
	}
	in, err := a.activityInstance(ctx, appID, instance)
	if err != nil {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: the activity instance: %w", ErrActivityUser, err)
	}
	if in.ApplicationID != appID || in.Location.ChannelID == "" || !slices.Contains(in.Users, u.ID) {
		return api.Player{}, api.Place{}, fmt.Errorf("%w: the user is not in the activity instance", ErrActivityUser)
	}
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	p := api.Player{ID: "dc:" + u.ID, Name: name, Locale: u.Locale}
	place := api.Place{Platform: Platform, Chat: in.Location.ChannelID}
	if in.Location.GuildID != "" {
		place.Title = "<#" + in.Location.ChannelID + ">"
	}
	return p, place, nil
}

// activity is an activity instance as Discord gives it (GET
// /applications/{application}/activity-instances/{instance}, with the bot's token).
type activity struct {
	ApplicationID string `json:"application_id"`
	Location      struct {
		ChannelID string `json:"channel_id"`
		GuildID   string `json:"guild_id"`
	} `json:"location"`
	Users []string `json:"users"`
}

func (a *Adapter) activityInstance(ctx context.Context, appID, instance string) (activity, error) {
	var in activity
	path := discordgo.EndpointApplication(appID) + "/activity-instances/" + url.PathEscape(instance)
	err := a.call(ctx, http.MethodGet, path, "Bot "+a.token, nil, &in)
	return in, err
}

// ActivityPlayers are the players (as ActivityUser names them) taking part in an activity
// instance now; none once it has ended (Discord answers 404 for an instance that does not run).
// The web table asks it while a session lasts.
func (a *Adapter) ActivityPlayers(ctx context.Context, instance string) ([]string, error) {
	appID := a.applicationID()
	if appID == "" || !instanceID.MatchString(instance) {
		return nil, ErrActivityUser
	}
	in, err := a.activityInstance(ctx, appID, instance)
	var status httpStatus
	switch {
	case errors.As(err, &status) && status == http.StatusNotFound:
		return nil, nil
	case err != nil:
		return nil, err
	case in.ApplicationID != appID:
		return nil, nil
	}
	players := make([]string, 0, len(in.Users))
	for _, u := range in.Users {
		players = append(players, "dc:"+u)
	}
	return players, nil
}

// httpStatus is a REST answer other than 200 (call's error).
type httpStatus int

func (s httpStatus) Error() string { return fmt.Sprintf("HTTP %d", int(s)) }

// RateLimited is Discord's 429: nothing is to be asked again before After (developer docs,
// Rate Limits, "Exceeding A Rate Limit": the body's retry_after in seconds, the Retry-After
// header the same). The web table reads RetryAfter.
type RateLimited struct{ After time.Duration }

func (e *RateLimited) Error() string             { return fmt.Sprintf("HTTP 429: rate limited for %v", e.After) }
func (e *RateLimited) RetryAfter() time.Duration { return e.After }

// rateLimited reads a 429's wait: the body's retry_after, else the Retry-After header, else a
// minute (Cloudflare's own 429 for a banned address says nothing).
func rateLimited(h http.Header, body []byte) *RateLimited {
	var rl struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(body, &rl) == nil && rl.RetryAfter > 0 {
		return &RateLimited{After: time.Duration(rl.RetryAfter * float64(time.Second))}
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return &RateLimited{After: time.Duration(s * float64(time.Second))}
	}
	return &RateLimited{After: time.Minute}
}

// call makes one REST request through the adapter's client (so APIURL applies): a form body if
// form is set; auth as the Authorization header. Its errors give the status only (httpStatus,
// or *RateLimited for a 429).
func (a *Adapter) call(ctx context.Context, method, endpoint, auth string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, body)
	if err != nil {
		return err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("User-Agent", "DiscordBot (https://github.com/kontermatt/kontermatt, 1)")
	resp, err := a.client.Do(req)
	if err != nil {
		return errors.New(a.redact(err.Error()))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return json.Unmarshal(data, out)
	case http.StatusTooManyRequests:
		return rateLimited(resp.Header, data)
	}
	return httpStatus(resp.StatusCode)
}

// registerCommands overwrites the bot's slash commands. Globally, with the Activity on, the
// app's Entry Point command (type 4, which Discord makes when Activities are switched on) is kept
// in the overwrite: Discord refuses a bulk overwrite that would remove it (developer docs,
// Opcodes and Status Codes: 50240, "You cannot remove this app's Entry Point command in a bulk
// update operation").
func (a *Adapter) registerCommands(appID string) error {
	cmds := Commands(a.cfg.GuildID != "")
	if a.cfg.GuildID != "" || !a.activityOn() {
		_, err := a.rest.ApplicationCommandBulkOverwrite(appID, a.cfg.GuildID, cmds)
		return err
	}
	uri := discordgo.EndpointApplicationGlobalCommands(appID)
	raw, err := a.rest.RequestWithBucketID("GET", uri, nil, uri)
	if err != nil {
		return err
	}
	var have []json.RawMessage
	if err := json.Unmarshal(raw, &have); err != nil {
		return err
	}
	body := make([]any, 0, len(cmds)+1)
	for _, c := range cmds {
		body = append(body, c)
	}
	for _, c := range have {
		var kind struct {
			Type int `json:"type"`
		}
		if json.Unmarshal(c, &kind) == nil && kind.Type == int(commandEntryPoint) {
			body = append(body, c) // as Discord has it: its handler, name and description
		}
	}
	_, err = a.rest.RequestWithBucketID("PUT", uri, body, uri)
	return err
}
