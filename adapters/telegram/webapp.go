package telegram

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The web table as a Telegram Mini App (adapters/web). Telegram opens the page inside the app
// from a web_app button, which only private chats take (Bot API, InlineKeyboardButton.web_app:
// "Available only in private chats between a user and the bot"), so the private hand message
// carries one; in a group the table's messages carry a plain link to the Mini App registered
// with BotFather, https://t.me/<bot>/<app>?startapp=<table> (Bot API docs, Mini Apps: "Direct
// link Mini Apps"). Either way the page proves who opens it with the initData Telegram hands it,
// which CheckInitData verifies.

// InitDataMaxAge is how old an initData may be: Telegram signs it when the app opens.
const InitDataMaxAge = time.Hour

// Errors of CheckInitData.
var (
	ErrInitDataSignature = errors.New("telegram: initData signature does not match")
	ErrInitDataExpired   = errors.New("telegram: initData is too old")
	ErrInitDataMalformed = errors.New("telegram: initData is malformed")
)

// CheckInitData verifies a Mini App's initData as Telegram's docs say (Mini Apps, "Validating
// data received via the Mini App"): the data-check-string is every field but hash, sorted by key,
// as key=value lines joined by "\n"; its HMAC-SHA256 under the secret key HMAC-SHA256(key
// "WebAppData", message the bot token) must be hash, in hex; and auth_date must be at most maxAge
// before now. It gives the user as a player and the start parameter of a direct link.
func CheckInitData(token, initData string, now time.Time, maxAge time.Duration) (api.Player, string, error) {
	if len(initData) > 8192 {
		return api.Player{}, "", ErrInitDataMalformed
	}
	vals, err := url.ParseQuery(initData)
	if err != nil {
		return api.Player{}, "", ErrInitDataMalformed
	}
	hash := vals.Get("hash")
	keys := make([]string, 0, len(vals))
	for k, v := range vals {
		if len(v) != 1 {
			return api.Player{}, "", ErrInitDataMalformed
		}
		if k != "hash" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + vals.Get(k)
	}
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(token))
	mac := hmac.New(sha256.New, secret.Sum(nil))
	mac.Write([]byte(strings.Join(lines, "\n")))
	got, err := hex.DecodeString(hash)
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return api.Player{}, "", ErrInitDataSignature
	}
	auth, err := strconv.ParseInt(vals.Get("auth_date"), 10, 64)
	if err != nil {
		return api.Player{}, "", ErrInitDataMalformed
	}
	at := time.Unix(auth, 0)
	if now.Sub(at) > maxAge || at.Sub(now) > time.Minute {
		return api.Player{}, "", ErrInitDataExpired
	}
	var u struct {
		ID        int64  `json:"id"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		UserName  string `json:"username"`
		Language  string `json:"language_code"`
		IsBot     bool   `json:"is_bot"`
	}
	if err := json.Unmarshal([]byte(vals.Get("user")), &u); err != nil || u.ID <= 0 || u.IsBot {
		return api.Player{}, "", ErrInitDataMalformed
	}
	p := playerOf(&tgbotapi.User{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, UserName: u.UserName, LanguageCode: u.Language})
	return p, vals.Get("start_param"), nil
}

// CheckInitData verifies initData with the adapter's bot token (see the function).
func (a *Adapter) CheckInitData(initData string, now time.Time) (api.Player, string, error) {
	return CheckInitData(a.cfg.Token, initData, now, InitDataMaxAge)
}

// appLink is the direct link to the Mini App for a table, "" without one.
func (a *Adapter) appLink(tableID string) string {
	if a.cfg.MiniApp == "" || a.cfg.Web == nil || a.Username() == "" {
		return ""
	}
	return "https://t.me/" + a.Username() + "/" + a.cfg.MiniApp + "?startapp=" + url.QueryEscape(tableID)
}

// webButtons are the web table's buttons a message gets: in a private chat a hand's web_app
// button (and, on the answer to a request for the hand, a one-time link for any browser); in a
// group the table's messages get the Mini App's direct link, and while a game is played the
// watch link for any browser.
func (a *Adapter) webButtons(it *item) {
	w, m := a.cfg.Web, it.Msg
	if w == nil || m.Table == "" {
		return
	}
	lang := m.Lang
	chat, _ := chatOfQueue(it.Dest)
	switch {
	case chat > 0 && m.Kind == api.KindHand && len(m.Buttons) > 0:
		if u := w.AppURL(m.Table); u != "" {
			it.Data.app, it.Data.appLabel = u, i18n.T(i18n.Pick(lang), "web.play_in_app")
		}
	case chat < 0 && (m.Kind == api.KindLive || m.Kind == api.KindLobby) && len(m.Buttons) > 0:
		if u := a.appLink(m.Table); u != "" {
			it.Data.link, it.Data.label = u, i18n.T(i18n.Pick(lang), "web.play_in_app")
		}
		if m.Watch != "" { // the table's link for people without a seat, in any browser
			it.Data.browser, it.Data.browserLabel = w.WatchLink(m.Table), m.Watch
		}
	}
}
