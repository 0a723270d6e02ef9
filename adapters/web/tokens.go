package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
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
	// Inst is a Discord Activity's instance: its participants are asked again while the
	// session lasts (see Server.sessionEnded).
	Inst  string `json:"i,omitempty"`
	Via   string `json:"v"`           // link, telegram, discord
	Exp   int64  `json:"e"`           // unix seconds
	Nonce string `json:"x,omitempty"` // a link's: it is redeemed once
}

// newTicket is the ticket of a player the platform vouched for, in the bounds maxTicket is
// computed from: the name cut to the longest a platform gives, the locale one the catalog has
// ("" for the others, which pick the same language).
func newTicket(p api.Player) ticket {
	name := p.Name
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes])
	}
	return ticket{Player: p.ID, Name: name, Locale: i18n.Match(p.Locale)}
}

// watching: the session of a watch link, someone without a seat who makes no move.
func (t ticket) watching() bool { return t.Via == "watch" }

func (t ticket) player() api.Player {
	return api.Player{ID: t.Player, Name: t.Name, Locale: t.Locale}
}

// The largest legal ticket, from the platforms' bounds on what a ticket holds, and the largest
// hello that carries it as a session: the socket's read limit. Computed, so that a change to the ticket
// changes them too.
const (
	// maxNameRunes is the longest name: Telegram's first and last names, 64 characters each
	// (Telegram API, account.updateProfile), joined by a space. Discord's (global name,
	// username, nickname) are 32 at most. encoding/json writes no character in more than six
	// bytes (\u0026 for &, \ufffd for a byte that is not UTF-8).
	maxNameRunes = 64 + 1 + 64
	// maxInstance is the longest Discord Activity instance ID taken (the discord adapter's
	// instanceID pattern).
	maxInstance = 200
)

var (
	largestTicket = ticket{
		Player: "dc:18446744073709551615", // a snowflake is a uint64; "tg:" and an int64 is shorter
		Name:   strings.Repeat("&", maxNameRunes),
		Locale: "lb",
		Table:  strings.Repeat("z", 16), // tableID
		Place:  "telegram:-9223372036854775808:2147483647",
		Inst:   strings.Repeat("i", maxInstance),
		Via:    "telegram",
		Exp:    math.MaxInt64,
		Nonce:  strings.Repeat("0", 32), // a link's, hex
	}
	// maxTicket is the length of the largest legal link or session (a ticket holding what
	// either may): a longer text is no ticket of ours.
	maxTicket = len(signer{key: make([]byte, 32)}.sign(purposeSession, largestTicket))
	// maxHello is the length of the page's largest hello, the largest message it sends.
	maxHello = func() int {
		hello, _ := json.Marshal(struct {
			T       string `json:"t"`
			Session string `json:"session"`
			Seq     uint64 `json:"seq"`
			Dark    bool   `json:"dark"`
		}{"hello", strings.Repeat("s", maxTicket), math.MaxUint64, true})
		return len(hello)
	}()
)

// The purposes a ticket is signed for: a link is never a session, nor the reverse.
const (
	purposeLink    = "kontermatt web link v1"
	purposeSession = "kontermatt web session v1"
	purposeWatch   = "kontermatt web watch v1" // a watch link: any number of people, no seat
)

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
