package discord

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// The fake's HTTP mode: the app has an Interactions Endpoint URL, so Discord posts each
// interaction to the bot instead of sending it over the gateway ("These two methods are mutually
// exclusive": docs: Interactions, Receiving and Responding), signed with the application's key
// (docs: Interactions Overview, Validating Security Request Headers), and takes the first answer
// from the HTTP response ("Inline HTTP Response Behavior"), checked as the callback route checks
// it (takeAnswer). Everything after the first answer goes through the webhook routes, as in
// gateway mode.

// receiveMode is how the bot gets its interactions.
type receiveMode string

const (
	viaGateway receiveMode = "gateway"
	viaHTTP    receiveMode = "http"
)

var receiveModes = []receiveMode{viaGateway, viaHTTP}

// eachMode runs an end-to-end test in both modes, each against its own fake.
func eachMode(t *testing.T, run func(t *testing.T, f *fakeDiscord)) {
	for _, m := range receiveModes {
		t.Run(string(m), func(t *testing.T) { run(t, newFakeDiscordVia(t, m)) })
	}
}

// fakeEndpointURL is the Interactions Endpoint URL the fake's app has in the portal; the fake
// posts to the bot's listener at its path, as a reverse proxy that keeps the path forwards.
const fakeEndpointURL = "https://bot.example.org/discord/interactions"

// newFakeDiscordVia is a fake that sends the interactions the mode's way.
func newFakeDiscordVia(t testing.TB, m receiveMode) *fakeDiscord {
	f := newFakeDiscord(t)
	if m != viaHTTP {
		return f
	}
	f.viaHTTP = true
	f.signKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	// "You must send an initial response within 3 seconds of receiving the event" (docs:
	// Receiving and Responding): Discord waits no longer for the HTTP answer.
	f.poster = &http.Client{Timeout: answerWindow}
	t.Cleanup(f.posts.Wait) // before the fake's server closes (cleanups run last first)
	return f
}

// publicKey is the application's public key as the portal shows it.
func (f *fakeDiscord) publicKey() string {
	return hex.EncodeToString(f.signKey.Public().(ed25519.PublicKey))
}

// signed makes a post of body to the endpoint signed with key at the time given, as Discord
// signs it: Ed25519 over X-Signature-Timestamp (Unix seconds) followed by the body, the signature
// in hex in X-Signature-Ed25519.
func signed(endpoint string, body []byte, key ed25519.PrivateKey, at time.Time) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(ed25519.Sign(key, append([]byte(ts), body...))))
	return req
}

// post posts an interaction to the bot's endpoint and returns its record at once; the answer is
// read meanwhile.
func (f *fakeDiscord) post(u fakeUser, typ int, channel string, data any, on *fakeMessage) *fakeInteraction {
	f.mu.Lock()
	in, payload := f.interaction(u, typ, channel, data, on, time.Now())
	in.Dispatched, in.posting = time.Now(), true
	endpoint := f.Endpoint
	if len(f.Pool) > 0 {
		endpoint = f.Pool[f.pooled%len(f.Pool)]
		f.pooled++
	}
	f.mu.Unlock()
	body, err := json.Marshal(payload)
	if err != nil {
		f.t.Fatal(err)
	}
	f.posts.Add(1)
	go func() {
		defer f.posts.Done()
		f.readAnswer(in, signed(endpoint, body, f.signKey, time.Now()))
	}()
	return in
}

// readAnswer takes the HTTP answer to a posted interaction as its first answer.
func (f *fakeDiscord) readAnswer(in *fakeInteraction, req *http.Request) {
	resp, err := f.poster.Do(req)
	var refusal *fakeRefusal
	status := 0
	if err == nil {
		body, files := readParts(f.t, resp.Header, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case status != http.StatusOK:
		case mt != "application/json" && mt != "multipart/form-data":
			// "Interaction responses have the same header requirements as normal HTTP API
			// requests" (docs: Receiving and Responding; Reference: HTTP API, Content-Type).
			f.fail("interaction %s answered with Content-Type %q", in.ID, resp.Header.Get("Content-Type"))
		default:
			f.takeLater(in, body, files)
			refusal = f.takeAnswer(in.ID, in.Token, body, files)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in.posting, in.taking = false, false
	switch {
	case err != nil:
		in.Failed = -1
		f.fail("interaction %s (from %s): no answer within %v: %v", in.ID, in.User.Name, answerWindow, err)
	case status != http.StatusOK:
		in.Failed = status
	case refusal != nil:
		in.Failed = refusal.code
	}
	f.notify()
}

// takeLater is the moment between the end of an HTTP answer and Discord taking it. Discord
// processes an interaction's HTTP response after the response has ended, and nothing says when:
// "Interaction tokens are valid for 15 minutes" once the response is processed, while a webhook
// call on a token Discord does not hold yet is answered as for any token it does not know, 404
// with code 10015 "Unknown Webhook" (docs: Interactions, Receiving and Responding; Topics: Opcodes
// and Status Codes, JSON Error Codes; the API's Webhook routes in api-specs' discord-openapi.json
// answer 404 for an unknown webhook). The fake takes each answer a randomized 2–40 ms after it
// has read it; the webhook routes meanwhile say Unknown Webhook (webhookToken), counted in
// early404. The message an update (type 7) changes is noted as it is now: if an edit by another
// route reaches it in that moment, the answer, taken after, shows an older state than that edit
// (counted in staleUpdates).
func (f *fakeDiscord) takeLater(in *fakeInteraction, body []byte, files []fakeFile) {
	f.mu.Lock()
	in.posting, in.taking = false, true
	read := time.Now()
	edits := -1
	if msg, ok := f.msgs[in.Message]; ok {
		edits = msg.Edits
	}
	delay := f.takeDelay
	if delay == 0 {
		delay = time.Duration(2+rand.IntN(39)) * time.Millisecond
	}
	f.notify()
	f.mu.Unlock()
	time.Sleep(delay)
	if edits < 0 || !bytes.Contains(body, []byte(`"type":7`)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// An edit asked for before the answer was read was sent before it, older than it: Discord
	// applies the answer after it, rightly.
	if msg, ok := f.msgs[in.Message]; ok && msg.Edits != edits && msg.editAsked.After(read) {
		f.staleUpdates++
	}
}

// awaitHTTPAnswer waits, before a webhook route takes a request for an interaction's token,
// until the interaction's HTTP answer is read: the adapter sends what follows the first answer
// only once it has written it. Discord takes it a moment later (takeLater).
func (f *fakeDiscord) awaitHTTPAnswer(token string) {
	deadline := time.After(2 * answerWindow)
	for {
		f.mu.Lock()
		in := f.byToken[token]
		posting, ch := in != nil && in.posting, f.changed
		f.mu.Unlock()
		if !posting {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}

// postRaw posts a body with the headers given to the endpoint and gives the answer's status and
// body.
func (f *fakeDiscord) postRaw(req *http.Request) (int, string, error) {
	resp, err := f.poster.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// checkEndpoint does what the developer portal does when the Interactions Endpoint URL is
// saved, and what Discord keeps doing afterwards: a PING, to be answered 200 with a PONG,
// {"type":1} (docs: Interactions Overview, Acknowledging PING requests), and posts whose
// signature fails, to be answered 401 ("If the signature fails validation, your app should
// respond with a 401 error code"; "we will not allow you to save your interactions URL" without
// it, and "we will also do automated, routine security checks against your endpoint, including
// purposefully sending you invalid signatures": the same section before the docs moved).
func (f *fakeDiscord) checkEndpoint() error {
	f.mu.Lock()
	endpoint := f.Endpoint
	f.mu.Unlock()
	ping := []byte(fmt.Sprintf(`{"id":%q,"application_id":%q,"type":1,"token":"ping-token","version":1}`, f.nextIDLocked(), f.AppID))
	status, body, err := f.postRaw(signed(endpoint, ping, f.signKey, time.Now()))
	if err != nil || status != http.StatusOK || body != `{"type":1}` {
		return fmt.Errorf("the PING was answered %d %q (%v), want 200 {\"type\":1}", status, body, err)
	}
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	tampered := signed(endpoint, ping, f.signKey, time.Now())
	tampered.Body = io.NopCloser(bytes.NewReader(bytes.Replace(ping, []byte(`"type":1`), []byte(`"type":2`), 1)))
	unsigned := signed(endpoint, ping, f.signKey, time.Now())
	unsigned.Header.Del("X-Signature-Ed25519")
	for what, req := range map[string]*http.Request{"signed with another key": signed(endpoint, ping, other, time.Now()),
		"changed after signing": tampered, "without a signature": unsigned} {
		if status, body, err := f.postRaw(req); err != nil || status != http.StatusUnauthorized {
			return fmt.Errorf("a post %s was answered %d %q (%v), want 401", what, status, body, err)
		}
	}
	return nil
}

// nextIDLocked is nextID taking f.mu.
func (f *fakeDiscord) nextIDLocked() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextID()
}
