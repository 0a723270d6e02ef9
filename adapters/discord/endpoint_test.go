package discord

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The interactions endpoint refuses what Discord's docs say it must refuse (docs: Interactions
// Overview, Validating Security Request Headers), answers a PING with a PONG, and the health
// check says whether Discord has reached it, instead of shards.
func TestInteractionsEndpoint(t *testing.T) {
	f := newFakeDiscordVia(t, viaHTTP)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := mem.New()
	a := mustNew(t, Config{Token: f.Token, GuildID: f.GuildID, APIURL: f.srv.URL, KV: store,
		Interactions: Interactions{URL: fakeEndpointURL, Listener: ln, PublicKey: f.publicKey()}})
	svc := tabletest.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: a}})
	a.Attach(svc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		svc.Close()
	})
	endpoint := "http://" + ln.Addr().String() + "/discord/interactions"
	f.Endpoint = endpoint
	f.waitFor("the commands to be registered", func() bool { return f.calls["PUT applications/{id}/guilds/{id}/commands"] > 0 })

	ping := []byte(`{"id":"1577490628684546060","application_id":"900000000000000001","type":1,"token":"t","version":1}`)
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	noTimestamp := signed(endpoint, ping, f.signKey, time.Now())
	noTimestamp.Header.Del("X-Signature-Timestamp")
	badHex := signed(endpoint, ping, f.signKey, time.Now())
	badHex.Header.Set("X-Signature-Ed25519", "zz"+badHex.Header.Get("X-Signature-Ed25519")[2:])
	get, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	big := append([]byte(`{"type":1,"pad":"`), bytes.Repeat([]byte{'x'}, maxInteractionBytes)...)
	big = append(big, `"}`...)
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"signed with another key", signed(endpoint, ping, other, time.Now()), http.StatusUnauthorized},
		{"without a timestamp", noTimestamp, http.StatusUnauthorized},
		{"a signature that is no hex", badHex, http.StatusUnauthorized},
		// A captured post sent again later: its signature holds, its time does not.
		{"signed ten minutes ago", signed(endpoint, ping, f.signKey, time.Now().Add(-10*time.Minute)), http.StatusUnauthorized},
		{"signed ten minutes ahead", signed(endpoint, ping, f.signKey, time.Now().Add(10*time.Minute)), http.StatusUnauthorized},
		{"too large", signed(endpoint, big, f.signKey, time.Now()), http.StatusRequestEntityTooLarge},
		{"a GET", get, http.StatusMethodNotAllowed},
	} {
		if status, body, err := f.postRaw(tc.req); err != nil || status != tc.status {
			t.Errorf("a post %s was answered %d %q (%v), want %d", tc.name, status, body, err, tc.status)
		}
	}
	// The endpoint serves (it refused the posts above): ready, though Discord has not reached it
	// yet (a quiet server's bot is ready after a deploy: issue 32).
	if err := a.Connected(); err != nil {
		t.Errorf("after refused posts only, Connected says %v", err)
	}
	// What the portal checks when the URL is saved: a PING, bad signatures.
	if err := f.checkEndpoint(); err != nil {
		t.Fatal(err)
	}
	if err := a.Connected(); err != nil {
		t.Errorf("after Discord's PING, Connected says %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.identifies) + f.calls["GET gateway/bot"] + f.calls["GET gateway"]; n > 0 {
		t.Errorf("%d gateway requests while interactions come by HTTP", n)
	}
}

// A host's configuration mistakes are refused with the key that is missing or wrong.
func TestInteractionsCheck(t *testing.T) {
	const key = "1d8ea3e46c0b24e8b0ab6d2d8c42e2f5e0fa2a7a4a2b1b0ffbc7d1e1a2b3c4d5"
	for _, tc := range []struct {
		name string
		c    Interactions
		want string // in the error; "" for none
	}{
		{"off", Interactions{}, ""},
		{"on", Interactions{Listen: "127.0.0.1:8444", URL: "https://bot.example.org/discord/interactions", PublicKey: key}, ""},
		{"no public key", Interactions{Listen: "127.0.0.1:8444", URL: "https://bot.example.org/i"}, "discord.public_key"},
		{"a public key that is no hex", Interactions{Listen: "127.0.0.1:8444", URL: "https://bot.example.org/i", PublicKey: "xyz"}, "discord.public_key must be"},
		{"a short public key", Interactions{Listen: "127.0.0.1:8444", URL: "https://bot.example.org/i", PublicKey: key[:62]}, "discord.public_key must be"},
		{"no url", Interactions{Listen: "127.0.0.1:8444", PublicKey: key}, "discord.interactions.url"},
		{"an http url", Interactions{Listen: "127.0.0.1:8444", URL: "http://bot.example.org/i", PublicKey: key}, "must be an https://"},
		{"a listen address without a port", Interactions{Listen: "127.0.0.1", URL: "https://bot.example.org/i", PublicKey: key}, "discord.interactions.listen"},
		{"a url without listen", Interactions{URL: "https://bot.example.org/i", PublicKey: key}, "needs discord.interactions.listen"},
	} {
		err := tc.c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want it to name %q", tc.name, err, tc.want)
		}
	}
}
