package discord

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// InviteURL is the link that adds the bot to a server with the permissions it needs (scopes bot
// and applications.commands, installed to the server: developer docs, OAuth2: Bot
// Authorization Flow). A guild ID preselects that server.
func InviteURL(appID, guildID string) string {
	q := url.Values{}
	q.Set("client_id", appID)
	q.Set("scope", "bot applications.commands")
	q.Set("permissions", strconv.FormatInt(Permissions, 10))
	q.Set("integration_type", "0")
	if guildID != "" {
		q.Set("guild_id", guildID)
	}
	return "https://discord.com/oauth2/authorize?" + q.Encode()
}

// PermissionsNamed names the invite's permissions as Discord's settings do in lang.
func PermissionsNamed(lang string) string {
	return permissionNames(lang, []int64{permViewChannel, permSendMessages, permSendInThreads, permAttachFiles})
}

// LookupApplication asks Discord which application a bot token belongs to (GET
// /oauth2/applications/@me) and gives its ID and name; apiURL is as in Config. Its errors never
// hold the token.
func LookupApplication(token, apiURL string) (id, name string, err error) {
	token = strings.TrimPrefix(token, "Bot ")
	if token == "" {
		return "", "", errors.New("discord: no token")
	}
	quiet := slog.New(slog.DiscardHandler)
	a := &Adapter{token: token, cfg: Config{Log: quiet, APIURL: apiURL}, log: quiet}
	a.client = &http.Client{Timeout: 20 * time.Second, Transport: newRewriter(apiURL)}
	register(a) // discordgo's lines, if any, are redacted of this token too
	defer unregister(a)
	app, err := a.session().Application("@me")
	switch {
	case refusedToken(err):
		return "", "", errors.New("discord: the token was refused (HTTP 401)")
	case err != nil:
		return "", "", fmt.Errorf("discord: looking up the application: %s", a.redact(err.Error()))
	}
	return app.ID, app.Name, nil
}
