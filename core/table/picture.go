package table

import (
	"errors"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/picture"
)

// ErrNoPicture is returned for a message that names no picture, or a table that has none to show.
var ErrNoPicture = errors.New("no picture for this message")

// Labels gives the picture labels in lang from the catalog, with the counts the language's
// plural rules make singular.
func Labels(lang string) picture.Labels {
	t := func(k string) string { return i18n.T(lang, "pic."+k) }
	l := picture.Labels{Title: t("Title"), TeamA: t("TeamA"), TeamB: t("TeamB"), Seat: t("Seat"),
		Open: t("Open"), Crossed: t("Crossed"), Added: t("Added"), Game: t("Game"), Trump: t("Trump"),
		Calls: t("Calls"), Points: t("Points"), Stripes: t("Stripes"), Winner: t("Winner"), Draw: t("Draw"),
		Earlier: t("Earlier"), NoGames: t("NoGames"), Trick: t("Trick"), LastTrick: t("LastTrick"),
		Turn: t("Turn"), Cards: t("Cards"),
		OpenOne: t("OpenOne"), CrossedOne: t("CrossedOne"), AddedOne: t("AddedOne"), EarlierOne: t("EarlierOne")}
	for n := range 32 {
		if i18n.PluralForm(lang, n) == "one" {
			l.One |= 1 << n
		}
	}
	return l
}

// Picture renders the picture a message names (the stripe board or the table) as it stands now,
// from public state only, with its alt text for screen readers and notifications.
func (s *Service) Picture(m Message, dark bool) (png []byte, alt string, err error) {
	s.mu.Lock()
	t, ok := s.tables[m.Table]
	s.mu.Unlock()
	if !ok || m.Picture == PictureNone {
		return nil, "", ErrNoPicture
	}
	th := picture.Light
	if dark {
		th = picture.Dark
	}
	lang := m.Lang
	if lang == "" {
		lang = i18n.Pick()
	}
	t.mu.Lock()
	var names [4]string
	for i := range names {
		names[i] = seatName(t, core.Seat(i))
	}
	var board *picture.BoardInput
	var tab *picture.TableInput
	switch {
	case m.Picture == PictureBoard:
		in := picture.BoardInput{Rules: t.opts.Rules, Board: core.Board{Start: t.opts.Rules.Stripes}, Names: names, Labels: Labels(lang)}
		if t.match != nil {
			in.Board, in.History = t.match.Board(), t.match.History()
		}
		board = &in
	case m.Picture == PictureTable && t.lastGame() != nil:
		// Between tricks the table shows the last one, as players would look at it.
		v := t.lastGame().View(core.NoSeat)
		tab = &picture.TableInput{View: v, Names: names, Labels: Labels(lang), ShowLastTrick: v.Trick.N == 0}
	case m.Picture == PictureLastTrick && t.lastGame() != nil:
		// The trick in progress is not the one asked for: only a finished trick is shown.
		if v := t.lastGame().View(core.NoSeat); len(v.Tricks) > 0 {
			tab = &picture.TableInput{View: v, Names: names, Labels: Labels(lang), ShowLastTrick: true}
		}
	}
	t.mu.Unlock() // rendering takes milliseconds: not under the table's lock
	switch {
	case board != nil:
		png, err = picture.Board(*board, th)
		return png, board.AltText(), err
	case tab != nil:
		png, err = picture.Table(*tab, th)
		return png, tab.AltText(), err
	}
	return nil, "", ErrNoPicture
}
