package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// Links and sessions are tickets signed with the server's key (HMAC-SHA256), so the server keeps
// nothing per session: a ticket says who the platform vouched for, at which table, until when.
// A link is a ticket of its own purpose that can be redeemed once (see Server.redeem) for a
// session; a session opens the table's socket again and again (a reload) until it expires.

// ticket is what a link or a session says.
type ticket struct {
	Player string `json:"p"`
	Name   string `json:"n"`
	Locale string `json:"l,omitempty"`
	Table  string `json:"t,omitempty"`
	// Place is the key of the place the platform says the person is in (a Discord activity's
	// channel): its current table is theirs to watch, seated or not.
	Place string `json:"w,omitempty"`
	Via   string `json:"v"`           // link, telegram, discord
	Exp   int64  `json:"e"`           // unix seconds
	Nonce string `json:"x,omitempty"` // a link's: it is redeemed once
}

func (t ticket) player() table.Player {
	return table.Player{ID: t.Player, Name: t.Name, Locale: t.Locale}
}

// The purposes a ticket is signed for: a link is never a session, nor the reverse.
const (
	purposeLink    = "kontermatt web link v1"
	purposeSession = "kontermatt web session v1"
)

// maxTicket bounds a ticket's text: anything longer is not ours.
const maxTicket = 2048

var errBadTicket = errors.New("not a valid ticket")
var errExpired = errors.New("ticket expired")

type signer struct{ key []byte }

func (s signer) mac(purpose string, payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)
}

func (s signer) sign(purpose string, t ticket) string {
	payload, err := json.Marshal(t)
	if err != nil {
		panic(err) // plain strings and numbers
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(purpose, payload))
}

// open checks a ticket's signature and expiry and gives what it says.
func (s signer) open(purpose, text string, now time.Time) (ticket, error) {
	var t ticket
	if len(text) > maxTicket {
		return t, errBadTicket
	}
	p, sig, ok := strings.Cut(text, ".")
	if !ok {
		return t, errBadTicket
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, payload)) {
		return t, errBadTicket
	}
	if err := json.Unmarshal(payload, &t); err != nil || t.Player == "" {
		return ticket{}, errBadTicket
	}
	if now.Unix() >= t.Exp {
		return ticket{}, errExpired
	}
	return t, nil
}

// nonce gives 16 random bytes as hex from r.
func nonce(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
