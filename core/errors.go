package core

import "errors"

// RuleError is a refused move or a bad record. Each has a stable Code, the one docs/records.md
// names, which records, logs and the adapters' message tables key on. Compare with errors.Is
// against the sentinels below; the engine wraps them with context (which card, whose turn) via
// MoveError.
type RuleError struct {
	Code   string
	text   string
	parent *RuleError // the general sentinel a special one refines, so errors.Is agrees with Code
}

func (e *RuleError) Error() string { return e.text }

// Is makes a special sentinel match the general one of its code: errors.Is(ErrAnnouncementsOff,
// ErrAnnounceWindowClosed) and errors.Is(ErrBadRules, ErrBadRecord) hold, not the other way round.
func (e *RuleError) Is(target error) bool { return e.parent != nil && target == error(e.parent) }

func ruleErr(code, text string) *RuleError { return &RuleError{Code: code, text: text} }

// The engine's sentinel errors, one per record error code.
var (
	// ErrBadRecord: malformed JSON, unknown format, a bad card or seat in a record.
	ErrBadRecord = ruleErr("bad_record", "malformed record")
	// ErrBadDeal: not four hands of six distinct cards covering the deck.
	ErrBadDeal = ruleErr("bad_deal", "the deal is not four hands of six distinct cards")
	// ErrWrongDealer: a match's next game is not dealt by the seat after the previous dealer.
	ErrWrongDealer = ruleErr("wrong_dealer", "wrong dealer for this game")
	// ErrNotYourTurn: the seat is not the one to act.
	ErrNotYourTurn = ruleErr("not_your_turn", "it is not this seat's turn")
	// ErrTrumpNotNamed: a play or announcement before forehand named trump.
	ErrTrumpNotNamed = ruleErr("trump_not_named", "trump has not been named yet")
	// ErrTrumpAlreadyNamed: trump named a second time.
	ErrTrumpAlreadyNamed = ruleErr("trump_already_named", "trump has already been named")
	// ErrCardNotInHand: the card is not in the seat's hand.
	ErrCardNotInHand = ruleErr("card_not_in_hand", "that card is not in the hand")
	// ErrMustFollowSuit: a plain suit was led and the seat holds it but played neither it nor a trump.
	ErrMustFollowSuit = ruleErr("must_follow_suit", "must follow the led suit or play a trump")
	// ErrMustPlayTrump: a trump was led and the seat holds a trump but played something else.
	ErrMustPlayTrump = ruleErr("must_play_trump", "a trump was led: must play a trump")
	// ErrAnnounceWindowClosed: announcing after the seat's first card, after the first trick, or
	// at a table that plays without announcements.
	ErrAnnounceWindowClosed = ruleErr("announce_window_closed", "too late to announce")
	// ErrAnnounceMissingCards: the announcer does not hold the queens the call needs.
	ErrAnnounceMissingCards = ruleErr("announce_missing_cards", "the hand lacks the queens for this call")
	// ErrAnnounceDuplicate: the call, or part of it, was announced already.
	ErrAnnounceDuplicate = ruleErr("announce_duplicate", "this call was already announced")
	// ErrGameOver: a move after the sixth trick.
	ErrGameOver = ruleErr("game_over", "the game is over")
	// ErrMatchOver: a game after a team has crossed out its last stripe.
	ErrMatchOver = ruleErr("match_over", "the match is over")
)

// ErrAnnouncementsOff is ErrAnnounceWindowClosed at a table whose options turn announcements off;
// it is its own value so chat messages can say why, has the same record code, and matches
// ErrAnnounceWindowClosed under errors.Is (test for it first when the message should differ).
var ErrAnnouncementsOff = &RuleError{Code: "announce_window_closed", text: "announcements are off at this table",
	parent: ErrAnnounceWindowClosed}

// ErrBadRules: a table option is out of range. It matches ErrBadRecord under errors.Is.
var ErrBadRules = &RuleError{Code: "bad_record", text: "invalid table options", parent: ErrBadRecord}

// Code gives the record error code of err, or "" if err is not a rule error.
func Code(err error) string {
	var re *RuleError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// MoveError says which move broke which rule and, for refused cards, what was allowed instead.
// It unwraps to the sentinel, so errors.Is(err, ErrMustFollowSuit) holds.
type MoveError struct {
	Err   *RuleError
	Seat  Seat
	Card  Card    // the card tried, if any
	Led   Card    // the card that led the trick, for follow errors
	Legal CardSet // the seat's legal cards, for follow errors
	Need  CardSet // the queens an announcement lacks
	Turn  Seat    // whose turn it is, for ErrNotYourTurn
	Call  Call    // the call tried, for announcement errors
}

func (e *MoveError) Error() string {
	msg := e.Err.text
	if e.Card != NoCard {
		msg = e.Card.String() + ": " + msg
	}
	switch {
	case e.Err == ErrNotYourTurn:
		msg += "; seat " + e.Turn.String() + " is to move"
	case !e.Legal.Empty():
		msg += "; legal: " + e.Legal.String()
	case !e.Need.Empty():
		msg += "; missing: " + e.Need.String()
	}
	return msg
}

func (e *MoveError) Unwrap() error { return e.Err }
