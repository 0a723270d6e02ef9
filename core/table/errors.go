package table

import (
	"errors"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
)

// userError is a refused command with the catalog key of its reason. It is shown only to the
// one who sent the command, in their language, and nothing changes.
type userError struct {
	key  string
	args []func(lang string) string // rendered in the reader's language
	// public, when set, is the catalog key of what may be said in public instead: the reason
	// tells what the actor holds (see Message.Secret).
	public string
	// cause, when set, is why the command could not be done at all, as Handle gives it
	// (ErrNotStored, ErrStopped): a refusal by the rules or the table has none.
	cause error
}

func (e *userError) Error() string { return e.key }

func (e *userError) text(lang string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a(lang)
	}
	return i18n.T(lang, e.key, args...)
}

func refuse(key string, args ...func(lang string) string) *userError {
	return &userError{key: key, args: args}
}

// secret marks the reason as one that shows the actor's cards; publicKey says it in public.
func (e *userError) secret(publicKey string) *userError {
	e.public = publicKey
	return e
}

func lit(s string) func(string) string { return func(string) string { return s } }

// optionRefusal says what is wrong with an option at new, and what it could be instead, with the
// names of the reader's language.
func optionRefusal(e *options.Error) *userError {
	switch {
	case e.Option == nil:
		return refuse("err.option.unknown", lit(e.Name), func(lang string) string {
			keys := make([]string, len(options.All))
			for i, o := range options.All {
				keys[i] = o.NameIn(lang)
			}
			return strings.Join(keys, ", ")
		})
	case e.Option.Number():
		return refuse("err.option.range", lit(e.Name), lit(strconv.Itoa(e.Option.Min)), lit(strconv.Itoa(e.Option.Max)))
	}
	values := e.Option.Values
	return refuse("err.option.value", lit(e.Name), func(lang string) string {
		keys := make([]string, len(values))
		for i, v := range values {
			keys[i] = v.NameIn(lang)
		}
		return i18n.Or(lang, keys...)
	})
}

// cardList is cards as the reader's language writes them (D♠ in de).
func cardList(set core.CardSet) func(string) string {
	return func(lang string) string { return i18n.Cards(lang, set.Cards(), " ") }
}

// cardArg is a card as the reader's language writes it.
func cardArg(c core.Card) func(string) string {
	return func(lang string) string { return i18n.Card(lang, c) }
}

// ruleMessages maps each engine sentinel to its catalog key: the one table from rule error to
// user message. Keys take the MoveError details as arguments where the reason needs them.
var ruleMessages = map[*core.RuleError]string{
	core.ErrNotYourTurn:          "err.not_your_turn",
	core.ErrTrumpNotNamed:        "err.trump_not_named",
	core.ErrTrumpAlreadyNamed:    "err.trump_already_named",
	core.ErrCardNotInHand:        "err.card_not_in_hand",
	core.ErrMustFollowSuit:       "err.must_follow_suit",
	core.ErrMustPlayTrump:        "err.must_play_trump",
	core.ErrAnnounceWindowClosed: "err.announce_window_closed",
	core.ErrAnnouncementsOff:     "err.announcements_off",
	core.ErrAnnounceMissingCards: "err.announce_missing_cards",
	core.ErrAnnounceDuplicate:    "err.announce_duplicate",
	core.ErrGameOver:             "err.game_over",
	core.ErrMatchOver:            "err.match_over",
}

// fromRule turns an engine error into the reason shown to the player; names gives seat names.
func fromRule(err error, names func(core.Seat) string) *userError {
	var me *core.MoveError
	if !errors.As(err, &me) {
		return refuse("err.internal")
	}
	key, ok := ruleMessages[me.Err]
	if !ok {
		return refuse("err.internal")
	}
	// The reasons that name the actor's cards (what they may play, what they lack) are secret.
	switch me.Err {
	case core.ErrNotYourTurn:
		return refuse(key, lit(names(me.Turn)))
	case core.ErrCardNotInHand:
		return refuse(key, cardArg(me.Card)).secret("err.public.play")
	case core.ErrMustFollowSuit:
		return refuse(key, cardArg(me.Card), cardArg(me.Led), cardList(me.Legal)).secret("err.public.play")
	case core.ErrMustPlayTrump:
		return refuse(key, cardArg(me.Card), cardList(me.Legal)).secret("err.public.play")
	case core.ErrAnnounceMissingCards:
		return refuse(key, lit(me.Call.Title()), cardList(me.Need)).secret("err.public.call")
	case core.ErrAnnounceDuplicate:
		return refuse(key, lit(me.Call.Title()))
	}
	return refuse(key)
}
