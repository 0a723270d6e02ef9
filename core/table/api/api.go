// Package api is the table engine's vocabulary, both ways: what a surface sends the engine (a
// Command from a Player at a Place, its Verb, the Action a Button carries) and what the engine
// says (a Message to a Target, of a Kind, with its Buttons, Picture or File, and a table's
// Status). It is its own package so that the chat adapters, the renderer of messages and the
// engine (core/table) share these words without one importing another: an adapter imports api,
// not the engine, to read a Message; the engine imports it to make one. It holds values and
// their encodings only, and imports nothing of the project.
package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Place is where a table lives: one chat (and optional thread) on one platform.
type Place struct {
	Platform string // "discord", "telegram", "local"
	Chat     string
	Thread   string
	// Title is how players know the place ("Café Konter", "<#123>"); it is shown on private
	// messages so a player at several tables can tell them apart. It is not part of the identity.
	Title string `json:",omitempty"`
}

// Key is the place's unique string form.
func (p Place) Key() string {
	k := p.Platform + ":" + p.Chat
	if p.Thread != "" {
		k += ":" + p.Thread
	}
	return k
}

// ParsePlaceKey reads a place's Key back (without its Title); false if key is not one. Chat and
// thread IDs hold no colon on any platform.
func ParsePlaceKey(key string) (Place, bool) {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Place{}, false
	}
	p := Place{Platform: parts[0], Chat: parts[1]}
	if len(parts) == 3 {
		p.Thread = parts[2]
	}
	return p, p.Key() == key
}

// Surface is how a platform shows its places, so that the texts fit what players there can do
// and who reads them. The zero value is a chat with buttons read by a group.
type Surface struct {
	// Typed: the place shows no buttons; players type every command. Texts that say "press
	// “Rematch”" say "type /rematch" instead.
	Typed bool
	// Personal: the place is one person's screen (a terminal). When exactly one person sits at
	// the table, its public texts speak to them about their own seat: "You win 12 points", not
	// "You wins 12 points" with "You" as a name. With several people at one screen (a hot seat)
	// nobody is "you".
	Personal bool
	// NoPictures: the place shows no pictures (a terminal). Its texts never point at one, and
	// the board's text lists every game: there is no caption to keep short.
	NoPictures bool
}

// Player is a platform identity. ID is platform-prefixed ("tg:123", "dc:456") and comes from the
// platform's event, never from button data.
type Player struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Locale string `json:"locale,omitempty"`
}

// Verb is what a command does, by name: the same verbs serve every surface, and a table's log
// keeps each accepted command's (core/store's LogEntry).
type Verb string

// The verbs. Timeout is internal (fired by the table's timer), the rest come from players.
const (
	VerbNew      Verb = "new"
	VerbJoin     Verb = "join"
	VerbLeave    Verb = "leave"
	VerbBot      Verb = "bot"
	VerbSeat     Verb = "seat"    // move to seat N (swap with whoever sits there) in the lobby
	VerbShuffle  Verb = "shuffle" // shuffle the teams in the lobby
	VerbDeal     Verb = "deal"
	VerbTrump    Verb = "trump"
	VerbAnnounce Verb = "announce"
	VerbPlay     Verb = "play"
	VerbHand     Verb = "hand"
	VerbBoard    Verb = "board"
	VerbLast     Verb = "last"
	VerbStop     Verb = "stop"
	VerbRematch  Verb = "rematch"
	VerbLang     Verb = "lang"
	VerbRules    Verb = "rules"
	VerbHelp     Verb = "help"
	// The league's verbs answer about a place, not a table: they work with no table there.
	VerbStats    Verb = "stats"    // a person's statistics here; "stats off|on" hides or shows them
	VerbTop      Verb = "top"      // this place's table: of the month, a month (2026-11) or all time
	VerbHistory  Verb = "history"  // the last matches here, each with its board and its record
	VerbSettings Verb = "settings" // this place's defaults for new tables
	VerbMyData   Verb = "mydata"   // what is kept about the person
	VerbForget   Verb = "forget"   // remove the person's name and ratings ("forget yes")
	// The coach's.
	VerbCoach   Verb = "coach"   // coach on|off: a private review after each game one plays
	VerbReview  Verb = "review"  // the review of the last game (or "review 2") now, privately
	VerbHint    Verb = "hint"    // the strong choice for one's turn, with a reason (hints on)
	VerbLearn   Verb = "learn"   // a guided solo game against three computer players
	VerbTimeout Verb = "timeout" // internal: a deadline passed
	// Internal: what the platform did to the table's place (see core/table's move.go), logged like commands.
	VerbMove  Verb = "move"  // the place got a new ID
	VerbClose Verb = "close" // the bot was removed from the place, or the place is gone
	VerbPause Verb = "pause" // the place cannot be written to, or can again
)

// Verbs lists the verbs players may type, in help order: every verb of core/table's registry
// but the internal ones.
var Verbs = []Verb{VerbNew, VerbJoin, VerbLeave, VerbBot, VerbSeat, VerbShuffle, VerbDeal, VerbTrump,
	VerbAnnounce, VerbPlay, VerbHand, VerbBoard, VerbLast, VerbStop, VerbRematch,
	VerbStats, VerbTop, VerbHistory, VerbSettings, VerbLang, VerbRules, VerbMyData, VerbForget,
	VerbHint, VerbReview, VerbCoach, VerbLearn, VerbHelp}

// ParseVerb reads a typed verb (case-insensitive, with or without a leading slash).
func ParseVerb(s string) (Verb, bool) {
	s = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "/"))
	for _, v := range Verbs {
		if string(v) == s {
			return v, true
		}
	}
	return "", false
}

// Command is one request from a surface: a typed command, a slash command or a button press.
type Command struct {
	Place   Place  // where it was sent; for a private chat, the DM itself
	Table   string // the table a button or private command is for; "" = the table at Place
	Actor   Player // from the platform's event
	Verb    Verb
	Args    []string // as typed, e.g. ["q♠"], ["hearts"], ["stripes=7", "timer=fast"]
	EventID string   // the platform's event ID: a duplicate delivery is applied at most once
	Seq     uint64   // the table sequence number a button carried; 0 for typed commands
	Admin   bool     // the actor administers the chat (from the platform)
	Private bool     // sent from the actor's private chat with the bot
	// Anonymous says the actor speaks for the chat, not as a person (a Telegram admin posting as
	// the group): with Admin they may do what an admin may do without a seat, and nothing that
	// needs a seat, which is refused with the reason "err.anonymous".
	Anonymous bool
}

// TargetKind says who may see a message.
type TargetKind uint8

// The targets.
const (
	ToPlace  TargetKind = iota // the table's public place
	ToPlayer                   // one player privately (DM)
	ToActor                    // only the sender of the command (ephemeral reply / alert)
)

// Target is who a message is for.
type Target struct {
	Kind   TargetKind
	Place  Place  // ToPlace: the channel
	Player Player // ToPlayer, ToActor
}

// Kind says what a message is, so adapters can choose how to show it.
type Kind string

// The kinds of message.
const (
	KindLobby   Kind = "lobby"   // editable lobby message with seat buttons
	KindLive    Kind = "live"    // the one live table message per game, edited in place
	KindHand    Kind = "hand"    // a player's private hand, edited in place
	KindSummary Kind = "summary" // a game's or match's summary, a new message
	KindReply   Kind = "reply"   // an answer to the actor (hand, board, last trick, rules, help)
	KindError   Kind = "error"   // a refused command, only for the actor
	KindNotice  Kind = "notice"  // a public or private notice (reminder, someone left, ...)
)

// Picture names an image adapters may attach, rendered from public state only.
type Picture string

// The pictures.
const (
	PictureNone  Picture = ""
	PictureBoard Picture = "board"
	PictureTable Picture = "table" // the table as it stands (between tricks: the last trick)
	// PictureLastTrick is the table showing the last finished trick, even while the next one is
	// being played: what "last trick" answers with.
	PictureLastTrick Picture = "last"
	PictureStandings Picture = "standings" // a place's table of a season (Message.Season)
)

// Message is what the service says. Editable messages have a Key (stable for the life of the
// thing they show) and a Version that rises with every new content: an adapter that is behind may
// drop every version but the latest. A Key begins with the table ID and "/", so an adapter that
// keeps a KV entry under it has that entry pruned with the table (see core/store's KV).
type Message struct {
	Target  Target
	Kind    Kind
	Key     string // "" for a new message every time
	Version uint64
	Table   string // table ID
	Title   string // short header: the chat and table it belongs to (for private messages)
	Text    string // localized plain text, lines separated by \n
	Buttons [][]Button
	Picture Picture
	// Season names the table a standings picture shows ("2026-11", or "all"); Record the kept
	// match a board picture or a file is of.
	Season, Record string
	File           *File // a file to send with the text
	Lang           string
	// Secret marks a reply whose text shows what its actor holds (their hand, the cards they may
	// play, the queens they lack). It goes to the actor alone: a private chat, a pop-up or an
	// ephemeral reply. Where a surface can reach the actor only in public, it shows Public instead,
	// a text that reveals nothing (the surfaces' one delivery policy: adapters/internal/chat).
	Secret bool
	Public string
	// Reason is the catalog key of a refusal (KindError), or of a public notice: a surface may
	// treat some apart (say a refusal only once; leave out a notice its table message shows
	// already); or ReasonForgotten. It is not shown.
	Reason string `json:",omitempty"`
	// HoldFor asks a surface to keep this content of an editable message in view at least this
	// long before an edit replaces it (a finished trick with its winner). Only a display hint.
	HoldFor time.Duration `json:",omitempty"`
	// Watch is the label of a link to watch the table on the web table (catalog btn.watch, in
	// the message's language): set on the public table message while a game is played. A surface
	// where the web table runs adds the link (its WatchLink); elsewhere it is left out.
	Watch string `json:",omitempty"`
}

// Digest fingerprints what a message shows: its title, text, picture and buttons, without the
// sequence numbers the buttons carry (a button stays valid until its presser acts, so a message
// whose only change is newer sequence numbers need not be sent again). It is the same in every
// process, so adapters may keep it with what they showed.
func (m Message) Digest() uint64 {
	h := HashString(fnvOffset, m.Title)
	h = HashString(h, m.Text)
	h = HashString(h, string(m.Picture))
	if m.Season != "" || m.Record != "" { // left out when empty: older messages keep their digests
		h = HashString(HashString(h, m.Season), m.Record)
	}
	if m.Watch != "" { // left out when empty, as above
		h = HashString(HashString(h, "\x02watch"), m.Watch)
	}
	for _, row := range m.Buttons {
		h = HashString(h, "\x01")
		for _, b := range row {
			h = HashString(h, b.Label)
			h = HashString(h, string(b.Action.Verb))
			h = HashString(h, b.Action.Arg)
			h = HashString(h, string([]byte{byte(b.Style), boolByte(b.Legal)}))
		}
	}
	return h
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

// HashString folds s, and a separator after it, into an FNV-1a hash.
func HashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// File is a document a message carries: a match's record in the replay format.
type File struct {
	Name string
	Data []byte
}

// ButtonStyle hints at how to draw a button.
type ButtonStyle uint8

// The button styles.
const (
	StylePrimary ButtonStyle = iota
	StyleSecondary
	StyleDanger
	StyleSuccess
)

// Button is a labelled action. Pressing it sends Action back as a Command; the service re-checks
// everything, so a button is only a route and a hint. Style is only how it looks; Legal says what
// it means for a hand's buttons: pressing it now is a legal move (a card that may be played, a
// trump or a call that may be made). A hand with a Legal button is its player's turn.
type Button struct {
	Label  string
	Action Action
	Style  ButtonStyle
	Legal  bool
}

// Action is what a button carries: a route (verb and argument) for a table at a sequence number.
// It encodes to at most 64 bytes (Telegram's callback_data limit; Discord allows 100).
type Action struct {
	Verb  Verb
	Table string
	Seq   uint64
	Arg   string
}

// ErrBadAction is returned for button data that is not ours or is malformed.
var ErrBadAction = errors.New("not a kontermatt button")

// MaxActionLen is the longest encoded Action.
const MaxActionLen = 64

// Encode gives the compact form "km|verb|table|seq|arg".
func (a Action) Encode() string {
	s := "km|" + string(a.Verb) + "|" + a.Table + "|" + strconv.FormatUint(a.Seq, 36) + "|" + a.Arg
	if len(s) > MaxActionLen {
		panic(fmt.Sprintf("action %q is longer than %d bytes", s, MaxActionLen))
	}
	return s
}

// ParseAction reads what Encode wrote; anything else is ErrBadAction.
func ParseAction(s string) (Action, error) {
	parts := strings.Split(s, "|")
	if len(s) > MaxActionLen || len(parts) != 5 || parts[0] != "km" {
		return Action{}, ErrBadAction
	}
	seq, err := strconv.ParseUint(parts[3], 36, 64)
	if err != nil {
		return Action{}, ErrBadAction
	}
	v := Verb(parts[1])
	if _, ok := ParseVerb(parts[1]); !ok {
		return Action{}, ErrBadAction
	}
	return Action{Verb: v, Table: parts[2], Seq: seq, Arg: parts[4]}, nil
}

// Command turns a pressed button into a command; actor, place and event come from the platform.
func (a Action) Command(place Place, actor Player, eventID string, private bool) Command {
	c := Command{Place: place, Table: a.Table, Actor: actor, Verb: a.Verb, EventID: eventID, Seq: a.Seq, Private: private}
	if a.Arg != "" {
		c.Args = []string{a.Arg}
	}
	return c
}

// ReasonForgotten is the Reason of the reply that tells a person they are forgotten: a surface
// that cannot deliver it writes nothing about them (no "cannot get private messages" mark), as
// nothing of a forgotten person may be written again.
const ReasonForgotten = "forget.done"

// Status is where a table stands.
type Status string

// The statuses of a table.
const (
	StatusLobby   Status = "lobby"
	StatusPlaying Status = "playing"
	StatusOver    Status = "over"   // match finished; rematch possible until Config.OverFor passes
	StatusClosed  Status = "closed" // stopped, expired or replaced; out of memory, pruned after the retention period
)
