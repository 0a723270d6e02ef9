package web

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// csp is the page's Content Security Policy: its own script, style and socket only, no inline
// code, and framed only by the apps that show it (Telegram Web's Mini App frame, Discord's
// Activity frame: this application's own https://<application id>.discordsays.com inside
// discord.com, never another app's).
func (s *Server) csp() string {
	p := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; " +
		"frame-ancestors 'self' https://web.telegram.org https://discord.com https://*.discord.com"
	if o := s.discordOrigin(); o != "" {
		p += " https://" + o
	}
	return p
}

// maxBody bounds a request's body: initData and codes are far smaller.
const maxBody = 16 << 10

// Handler serves the page, its API and the sockets. Paths may come with Discord's "/.proxy"
// prefix (an Activity's requests pass Discord's proxy) and with the public address's path.
func (s *Server) Handler() http.Handler {
	static, _ := fs.Sub(page, "page")
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/.proxy")
		if prefix := strings.TrimSuffix(s.public.Path, "/"); prefix != "" {
			p = strings.TrimPrefix(p, prefix)
		}
		p = strings.TrimPrefix(p, "/.proxy")
		if p == "" {
			p = "/"
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		switch {
		case p == "/ws":
			s.serveSocket(w, r)
		case p == "/api/session" && r.Method == http.MethodPost:
			s.serveSession(w, r)
		case p == "/api/strings" && r.Method == http.MethodGet:
			s.serveStrings(w, r)
		case strings.HasPrefix(p, "/api/"):
			http.Error(w, "not found", http.StatusNotFound)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case p == "/rules":
			s.serveRules(w, r)
		case p == "/" || p == "/index.html" || p == "/app.js" || p == "/app.css":
			h.Set("Content-Security-Policy", s.csp())
			h.Set("Cache-Control", "no-cache")
			r2 := r.Clone(r.Context())
			r2.URL.Path = p
			if p == "/index.html" {
				r2.URL.Path = "/"
			}
			files.ServeHTTP(w, r2)
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	})
}

// allowedOrigin reports whether a browser request comes from the page: from the public address,
// or from the Discord Activity's frame (https://<application id>.discordsays.com). A request
// without an Origin is no browser's cross-site request; an Origin without a host (https://) is
// no origin of ours.
func (s *Server) allowedOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Scheme+"://"+u.Host, s.public.Scheme+"://"+s.public.Host) {
		return true
	}
	d := s.discordOrigin()
	return d != "" && u.Scheme == "https" && strings.EqualFold(u.Host, d)
}

// snowflake is a Discord ID: an application's, here.
var snowflake = regexp.MustCompile(`^[0-9]{1,20}$`)

// discordOrigin is the host this application's Activity runs on, "" without Discord or while
// its ID is not known.
func (s *Server) discordOrigin() string {
	if s.cfg.Discord == nil {
		return ""
	}
	if id := s.cfg.Discord.AppID(); snowflake.MatchString(id) {
		return id + ".discordsays.com"
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveStrings gives the page's texts in a language, and what the page needs to know before a
// session: the Discord application's ID for the Embedded App SDK's handshake.
func (s *Server) serveStrings(w http.ResponseWriter, r *http.Request) {
	lang := i18n.Pick(r.URL.Query().Get("lang"))
	reply := map[string]any{"lang": lang, "strings": pageStrings(lang)}
	if s.cfg.Discord != nil {
		reply["discord_client_id"] = s.cfg.Discord.AppID()
	}
	writeJSON(w, http.StatusOK, reply)
}

type sessionRequest struct {
	Lang     string `json:"lang"` // the browser's, for the texts of a refusal
	Link     string `json:"link"`
	Watch    string `json:"watch"`    // a watch link's ticket
	Telegram string `json:"telegram"` // initData
	Table    string `json:"table"`    // the table a Mini App's button named
	Discord  string `json:"discord"`  // the OAuth2 code
	Instance string `json:"instance"` // the Activity's instance ID
}

var tableID = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// serveSession turns what a platform vouched for into a session: a one-time link, Telegram's
// initData, or a Discord Activity's code. Each client address makes a few requests in a row (see
// sessionBurst); a Discord code is exchanged only within the bot's own budget and never while
// Discord said to wait; a Discord user gets a few sessions in a row.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request) {
	if !s.allowedOrigin(r) {
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	var req sessionRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": i18n.T(i18n.Pick(req.Lang), "web.bad_message")})
		return
	}
	lang := i18n.Pick(req.Lang)
	refuse := func(status int, key string, args ...any) {
		writeJSON(w, status, map[string]string{"error": i18n.T(lang, key, args...)})
	}
	// later refuses for now, with how long to wait.
	later := func(status int, wait time.Duration, key string, args ...any) {
		w.Header().Set("Retry-After", strconv.Itoa(seconds(wait)))
		refuse(status, key, args...)
	}
	now := s.cfg.Now()
	if ok, wait := s.perAddr.allow(httpserve.Client(r).String(), now); !ok {
		later(http.StatusTooManyRequests, wait, "web.too_many_tries")
		return
	}
	var t ticket
	switch {
	case req.Link != "":
		var ok bool
		if t, ok = s.redeem(r.Context(), req.Link, now); !ok {
			refuse(http.StatusUnauthorized, "web.expired")
			return
		}
	case req.Telegram != "" && s.cfg.Telegram != nil:
		p, start, err := s.cfg.Telegram.CheckInitData(req.Telegram, now)
		if err != nil {
			s.log.Info("Telegram initData refused", "err", err)
			refuse(http.StatusUnauthorized, "web.tg_refused")
			return
		}
		id := start
		if id == "" {
			id = req.Table
		}
		if !tableID.MatchString(id) {
			refuse(http.StatusBadRequest, "web.open_from_chat")
			return
		}
		t = newTicket(p)
		t.Table, t.Via = id, "telegram"
	case req.Discord != "" && s.cfg.Discord != nil:
		if !instanceID.MatchString(req.Instance) {
			refuse(http.StatusUnauthorized, "web.dc_refused")
			return
		}
		if wait := s.dcWait.left(now); wait > 0 {
			later(http.StatusServiceUnavailable, wait, "web.dc_wait", seconds(wait))
			return
		}
		if ok, wait := s.shares.allow(shareKey(httpserve.Client(r)), now); !ok {
			later(http.StatusServiceUnavailable, wait, "web.busy") // this network had its share
			return
		}
		if ok, wait := s.exchanges.allow("", now); !ok {
			later(http.StatusServiceUnavailable, wait, "web.busy")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
		defer cancel()
		p, place, err := s.cfg.Discord.ActivityUser(ctx, req.Discord, req.Instance)
		var rl interface{ RetryAfter() time.Duration }
		switch {
		case errors.As(err, &rl) && rl.RetryAfter() > 0:
			s.dcWait.set(now.Add(rl.RetryAfter()))
			s.log.Warn("Discord asks the bot to wait before it exchanges another code", "retry_after", rl.RetryAfter())
			later(http.StatusServiceUnavailable, rl.RetryAfter(), "web.dc_wait", seconds(rl.RetryAfter()))
			return
		case err != nil:
			s.log.Info("Discord activity user refused", "err", err)
			refuse(http.StatusUnauthorized, "web.dc_refused")
			return
		}
		if ok, wait := s.perUser.allow(p.ID, now); !ok {
			lang = i18n.Pick(p.Locale, lang)
			later(http.StatusTooManyRequests, wait, "web.too_many_tries")
			return
		}
		t = newTicket(p)
		t.Place, t.Inst, t.Via = place.Key(), req.Instance, "discord"
	case req.Watch != "":
		w, err := s.sign.open(purposeWatch, req.Watch, now)
		if err != nil || !tableID.MatchString(w.Table) {
			refuse(http.StatusUnauthorized, "web.expired")
			return
		}
		// Each watcher is someone of their own (the table's sockets are one per person), and
		// no one the table knows: no seat, no hand.
		s.randMu.Lock()
		n, err := nonce(s.cfg.Rand)
		s.randMu.Unlock()
		if err != nil {
			refuse(http.StatusServiceUnavailable, "web.busy")
			return
		}
		t = ticket{Player: "watch:" + n, Locale: i18n.Match(req.Lang), Table: w.Table, Via: "watch"}
	default:
		refuse(http.StatusBadRequest, "web.open_from_chat")
		return
	}
	t.Exp, t.Nonce = now.Add(s.cfg.SessionTTL).Unix(), ""
	writeJSON(w, http.StatusOK, map[string]string{"session": s.sign.sign(purposeSession, t),
		"lang": i18n.Pick(t.Locale, lang)})
}

// seconds is a wait in whole seconds, rounded up: what a Retry-After and the page say.
func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// instanceID is a Discord Activity's instance ID as the discord adapter takes it.
var instanceID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,200}$`)

// bucketLinks keeps the links that were redeemed: "<table>/<nonce>" → "1", pruned with the table.
const bucketLinks = "web.links"

// redeem checks a one-time link and marks it used; false for a link that is forged, expired or
// used already. Marking it is one compare-and-swap in the store (a link not yet used becomes
// used), so a link used at one copy of the bot is used at every copy, and of two copies redeeming
// it at once one wins; a store without it (none in this repository) is asked under a lock.
func (s *Server) redeem(ctx context.Context, link string, now time.Time) (ticket, bool) {
	t, err := s.sign.open(purposeLink, link, now)
	if err != nil || t.Nonce == "" || !tableID.MatchString(t.Table) {
		return ticket{}, false
	}
	key := t.Table + "/" + t.Nonce
	if sw, ok := s.cfg.KV.(table.Swapper); ok {
		_, err := sw.Swap(ctx, bucketLinks, key, nil, []byte("1"))
		if errors.Is(err, table.ErrConflict) {
			return ticket{}, false // used
		}
		if err != nil {
			s.log.Error("saving a used link", "err", err)
			return ticket{}, false
		}
		return t, true
	}
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	_, used, err := s.cfg.KV.Get(ctx, bucketLinks, key)
	if err != nil {
		s.log.Error("reading used links", "err", err)
		return ticket{}, false
	}
	if used {
		return ticket{}, false
	}
	if err := s.cfg.KV.Put(ctx, bucketLinks, key, []byte("1")); err != nil {
		s.log.Error("saving a used link", "err", err)
		return ticket{}, false
	}
	return t, true
}

// errNoSession is a socket whose hello carries no valid session.
var errNoSession = errors.New("no valid session")

// session reads a session ticket and finds its table: the one it names, or the current table
// of the place it names.
func (s *Server) session(text string) (ticket, error) {
	t, err := s.sign.open(purposeSession, text, s.cfg.Now())
	if err != nil {
		return ticket{}, errNoSession
	}
	if t.Place != "" {
		p, ok := api.ParsePlaceKey(t.Place)
		if !ok {
			return ticket{}, errNoSession
		}
		t.Table = s.service().TableAt(p)
	}
	return t, nil
}
