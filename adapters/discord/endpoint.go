package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/adapters/internal/chat"
)

// Interactions by HTTP. With an Interactions Endpoint URL set in the developer portal, Discord
// posts every interaction to that address instead of sending it over the gateway ("These two
// methods are mutually exclusive": developer docs, Interactions: Receiving and Responding), and
// the bot needs no gateway connection at all: no shards, no session starts, no resumes. Each post
// is signed with the application's key; the answer to it is the HTTP response itself (developer
// docs, Receiving and Responding, "Inline HTTP Response Behavior"), within the same 3 s, and what
// follows goes through the webhook routes of the interaction's token, as in gateway mode.

// Interactions configures the interactions endpoint. It is on when Listen (or Listener) is set.
type Interactions struct {
	// URL is the public https:// address set as the Interactions Endpoint URL in the developer
	// portal (discord.interactions.url); its path is the one served, so the reverse proxy must
	// keep it.
	URL string
	// Listen is the address the server listens on, where the reverse proxy forwards the posts
	// (discord.interactions.listen).
	Listen string
	// PublicKey is the application's public key as the portal shows it, 64 hex digits
	// (discord.public_key): every post must be signed with its private half.
	PublicKey string
	// Listener, if set, is served instead of listening on Listen (socket activation, tests).
	Listener net.Listener
	// HTTP are the server's limits; a zero field takes the endpoint's default (endpointLimits).
	HTTP httpserve.Limits
}

// On reports whether interactions come by HTTP.
func (c Interactions) On() bool { return c.Listen != "" || c.Listener != nil }

// Check validates the endpoint's settings (New calls it; a config loader may call it first). Its
// errors name the configuration keys.
func (c Interactions) Check() error {
	if !c.On() {
		if c.URL != "" {
			return errors.New("discord.interactions.url needs discord.interactions.listen, the address the reverse proxy forwards it to")
		}
		return nil
	}
	if c.Listener == nil {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("discord.interactions.listen %q: %v", c.Listen, err)
		}
	}
	if c.PublicKey == "" {
		return errors.New("discord.interactions.listen needs discord.public_key (or KONTERMATT_DISCORD_PUBLIC_KEY): the application's public key from the developer portal's General Information")
	}
	if _, err := parsePublicKey(c.PublicKey); err != nil {
		return err
	}
	if c.URL == "" {
		return errors.New("discord.interactions.listen needs discord.interactions.url: the public https:// address set as the Interactions Endpoint URL in the developer portal")
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		// The portal takes only https:// addresses.
		return fmt.Errorf("discord.interactions.url %q must be an https:// address like https://bot.example.org/discord/interactions", c.URL)
	}
	return nil
}

func parsePublicKey(s string) (ed25519.PublicKey, error) {
	k, err := hex.DecodeString(s)
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("discord.public_key must be the %d hex digits the developer portal shows as the Public Key", 2*ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(k), nil
}

// path is the URL path the endpoint answers on.
func (c Interactions) path() string {
	u, _ := url.Parse(c.URL)
	if u == nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// maxInteractionBytes bounds a posted interaction. Discord's are a few kilobytes: a button's
// carries the message it sat on (2,000 characters and its components at most), a command's its
// options and resolved objects.
const maxInteractionBytes = 256 << 10

// endpointLimits are the endpoint server's: Discord posts each interaction once and waits 3 s for
// the answer; the reverse proxy is on this machine unless the host says otherwise.
var endpointLimits = httpserve.Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
	WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxBody: maxInteractionBytes + 1,
	MaxConns: 256, MaxConnsPerAddr: 128, Proxies: httpserve.Loopback}

// signatureSkew is how far a post's X-Signature-Timestamp may be from Discord's present (as the
// REST answers' Date headers tell it, see discordClock) before the post is refused: a captured
// post cannot be replayed later. An interaction itself is applied only within its 3 s window
// (onInteraction), so the bound need not be tight; it allows for a clock that is a little off.
const signatureSkew = 5 * time.Minute

// Signature verification (developer docs, Interactions Overview: Validating Security Request
// Headers): X-Signature-Ed25519 is the hex Ed25519 signature of X-Signature-Timestamp followed by
// the raw body, made with the application's key. "If the signature fails validation, your app
// should respond with a 401 error code"; Discord refuses to save an endpoint that does not, and
// keeps sending bad signatures to it afterwards to check.

var (
	errNoSignature  = errors.New("no X-Signature-Ed25519 or X-Signature-Timestamp")
	errBadSignature = errors.New("the signature does not verify with the application's public key")
	errOldSignature = errors.New("the signature's timestamp is too far from now")
)

// verify checks a post's signature and its timestamp against now.
func verify(key ed25519.PublicKey, h http.Header, body []byte, now time.Time) error {
	sigHex, ts := h.Get("X-Signature-Ed25519"), h.Get("X-Signature-Timestamp")
	if sigHex == "" || ts == "" {
		return errNoSignature
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errBadSignature
	}
	msg := make([]byte, 0, len(ts)+len(body))
	msg = append(append(msg, ts...), body...)
	if !ed25519.Verify(key, msg, sig) {
		return errBadSignature
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errBadSignature
	}
	if d := now.Sub(time.Unix(secs, 0)); d > signatureSkew || d < -signatureSkew {
		return errOldSignature
	}
	return nil
}

// endpoint is the interactions server's state: whether Discord has reached it, and its refusals.
type endpoint struct {
	key ed25519.PublicKey
	srv *httpserve.Server

	mu      sync.Mutex
	reached time.Time // the first signed post since the server started; zero before
	running bool
	refused refusalLog
}

// httpAnswer carries an interaction's first answer from its handler to the HTTP response.
type httpAnswer struct {
	body chan answerBody // the answer, once
	sent chan error      // whether it was written
	gone chan struct{}   // closed when the request is over
}

type answerBody struct {
	contentType string
	data        []byte
}

var (
	errAnsweredTwice = errors.New("the interaction was answered already")
	errRequestGone   = errors.New("the interaction's request is over (answered too late?)")
)

func newHTTPAnswer() *httpAnswer {
	return &httpAnswer{body: make(chan answerBody, 1), sent: make(chan error, 1), gone: make(chan struct{})}
}

// deliver hands the answer to the request and waits until it has been written: what the handler
// sends next (an edit of the original, a follow-up) must reach Discord after it.
func (h *httpAnswer) deliver(b answerBody) error {
	select {
	case h.body <- b:
	default:
		return errAnsweredTwice
	}
	select {
	case err := <-h.sent:
		return err
	case <-h.gone:
		// Written just before the request ended: both cases were ready and select picked
		// either; the answer went out, and the handler must not think it did not.
		select {
		case err := <-h.sent:
			return err
		default:
			return errRequestGone
		}
	}
}

// encodeResponse is an interaction response as the HTTP answer: JSON, or with files
// multipart/form-data with the JSON in payload_json (developer docs, Reference: Uploading Files),
// as discordgo sends it to the callback route.
func encodeResponse(resp any, files []*discordgo.File) (answerBody, error) {
	if len(files) > 0 {
		ct, data, err := discordgo.MultipartBodyWithJSON(resp, files)
		return answerBody{ct, data}, err
	}
	data, err := json.Marshal(resp)
	return answerBody{"application/json", data}, err
}

// runEndpoint serves the interactions endpoint until ctx ends: listening first, so that Discord's
// first post (and the portal's check when the URL is saved) finds it ready.
func (a *Adapter) runEndpoint(ctx context.Context) error {
	c := a.cfg.Interactions
	ln := c.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", c.Listen); err != nil {
			return &chat.StartError{Err: fmt.Errorf("discord: interactions endpoint: %w", err)}
		}
	}
	mux := http.NewServeMux()
	mux.Handle(c.path(), http.HandlerFunc(a.serveInteraction))
	srv := httpserve.New("discord interactions", mux, c.HTTP.Or(endpointLimits), a.log)
	a.endpoint.mu.Lock()
	a.endpoint.srv, a.endpoint.running, a.endpoint.reached = srv, true, time.Time{}
	a.endpoint.mu.Unlock()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	a.log.Info("receiving interactions by HTTP", "url", c.URL, "listen", ln.Addr().String())

	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	var failed error
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case err := <-served:
			failed, done = fmt.Errorf("discord: interactions endpoint: %w", err), true
			served <- err
		case <-sweep.C:
			a.sweep()
		}
	}
	// Posts that come while the handlers in flight finish are told the bot is stopping (closed);
	// then the server stops, waiting for the answers being written.
	a.stop()
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-served
	a.endpoint.mu.Lock()
	a.endpoint.running = false
	a.endpoint.refused.flush(a.log)
	a.endpoint.mu.Unlock()
	if failed != nil {
		return &chat.StartError{Err: failed}
	}
	return nil
}

// serveInteraction takes one of Discord's posts: signed, one interaction, answered in the
// response.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInteractionBytes))
	if err != nil {
		a.refuse(r, "body unreadable or too large")
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	now, ok := a.clock.now()
	if !ok {
		now = time.Now()
	}
	if err := verify(a.endpoint.key, r.Header, body, now); err != nil {
		a.refuse(r, err.Error())
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	a.endpoint.mu.Lock()
	if a.endpoint.reached.IsZero() {
		a.endpoint.reached = time.Now()
		a.log.Info("Discord reached the interactions endpoint")
	}
	a.endpoint.mu.Unlock()
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil {
		a.log.Warn("a signed interaction discordgo cannot read", "err", err)
		http.Error(w, "unreadable interaction", http.StatusBadRequest)
		return
	}
	if i.Type == discordgo.InteractionPing {
		// Answered with a PONG, type 1 (developer docs, Interactions Overview: Acknowledging
		// PING requests), with its Content-Type (docs: Reference, HTTP API).
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":1}`))
		return
	}
	ans := newHTTPAnswer()
	defer close(ans.gone)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		a.onInteraction(&i, extrasOf(body), ans)
	}()
	write := func(b answerBody) {
		w.Header().Set("Content-Type", b.contentType)
		_, err := w.Write(b.data)
		if err == nil {
			err = http.NewResponseController(w).Flush()
		}
		ans.sent <- err
	}
	select {
	case b := <-ans.body:
		write(b)
	case <-handled:
		// An answer given as the handler ended (a deferral from its timer's goroutine) may be
		// ready too: select picks either of two ready cases, and this one must not lose it.
		select {
		case b := <-ans.body:
			write(b)
		default:
			// Not answered: an interaction past its window, or one the bot takes no part in.
			http.Error(w, "not answered", http.StatusInternalServerError)
		}
	}
	// The request's context is not waited on: the answer comes within the 3 s (handle defers
	// it in time), and if Discord has gone by then, writing it fails and the handler hears so.
}

// refuse notes a refused post: Discord checks the endpoint with bad signatures now and then, and
// anyone may post to it, so the log gets one line at once and then at most one a minute.
func (a *Adapter) refuse(r *http.Request, why string) {
	a.traffic.Refused()
	a.endpoint.mu.Lock()
	defer a.endpoint.mu.Unlock()
	a.endpoint.refused.note(a.log, why, httpserve.Client(r).String())
}

// refusalLog counts refusals and logs them at most once a minute.
type refusalLog struct {
	last   time.Time
	n      int
	why    string
	remote string
}

const refusalLogEvery = time.Minute

func (l *refusalLog) note(log *slog.Logger, why, remote string) {
	l.n++
	l.why, l.remote = why, remote
	if time.Since(l.last) >= refusalLogEvery {
		l.flush(log)
	}
}

func (l *refusalLog) flush(log *slog.Logger) {
	if l.n == 0 {
		return
	}
	log.Info("interactions endpoint: posts refused", "refused", l.n, "last_reason", l.why, "last_client", l.remote)
	l.last, l.n = time.Now(), 0
}

// endpointConnected is the health check's view in HTTP mode: whether the endpoint is serving.
func (a *Adapter) endpointConnected() (serving bool, err error) {
	e := &a.endpoint
	e.mu.Lock()
	defer e.mu.Unlock()
	// Ready once it listens (its key was checked at start): a quiet server may see no post for
	// hours, and a readiness probe that waited for one would never pass after a deploy (issue
	// 32). Whether Discord reached it is the log's to say (the portal's check posts a PING).
	return e.running, nil
}

// extrasOf reads from an interaction's JSON what discordgo v0.29.0 does not decode (see
// interactionExtras).
func extrasOf(raw []byte) interactionExtras {
	var ch struct {
		Type     discordgo.ChannelType `json:"type"`
		Metadata *struct {
			Locked bool `json:"locked"`
		} `json:"thread_metadata"`
	}
	var x interactionExtras
	if jsonField(raw, "channel", &ch) {
		x.thread = ch.Type == discordgo.ChannelTypeGuildPublicThread || ch.Type == discordgo.ChannelTypeGuildPrivateThread ||
			ch.Type == discordgo.ChannelTypeGuildNewsThread
		x.private = ch.Type == discordgo.ChannelTypeGuildPrivateThread
		if x.metadata = x.thread && ch.Metadata != nil; x.metadata {
			x.locked = ch.Metadata.Locked
		}
	}
	return x
}
