package table

import (
	"cmp"
	"context"
	"errors"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// ErrNoPicture is returned for a message that names no picture, or a table that has none to show.
var ErrNoPicture = errors.New("no picture for this message")

// Picture renders the picture a message names (the stripe board or the table) as it stands now,
// from public state only, with its alt text for screen readers and notifications.
//
// A standings picture shows the league table of the message's place and Season; a board picture
// with a Record shows that kept match, not the table's.
func (s *Service) Picture(ctx context.Context, m api.Message, dark bool) (png []byte, alt string, err error) {
	th := picture.Light
	if dark {
		th = picture.Dark
	}
	lang := m.Lang
	if lang == "" {
		lang = i18n.Pick()
	}
	switch {
	case m.Picture == api.PictureStandings:
		if s.cfg.League == nil {
			return nil, "", ErrNoPicture
		}
		return s.cfg.League.StandingsPicture(ctx, m.Target.Place, m.Season, lang, th, s.hidden)
	case m.Picture == api.PictureBoard && m.Record != "":
		return s.keptBoard(ctx, m.Record, lang, th)
	}
	t, ok := s.index.get(m.Table)
	if !ok || m.Picture == api.PictureNone {
		return nil, "", ErrNoPicture
	}
	t.mu.Lock()
	board, tab := s.pub.sight(t).PictureInput(m.Picture, lang)
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

// keptBoard draws the stripe board of a kept match as it ended.
func (s *Service) keptBoard(ctx context.Context, key, lang string, th picture.Theme) ([]byte, string, error) {
	data, ok, err := s.cfg.Store.Record(ctx, key)
	if err != nil || !ok {
		return nil, "", cmp.Or(err, ErrNoPicture)
	}
	rec, m, err := ParseStoredMatch(data)
	if err != nil {
		return nil, "", err
	}
	in := picture.BoardInput{Rules: m.Rules(), Board: m.Board(), History: m.History(), Labels: render.Labels(lang)}
	for i, seat := range rec.Seats {
		switch {
		case seat.ID != "":
			in.Names[i] = seat.Name
		default:
			in.Names[i] = i18n.T(lang, "seat.robot", i+1)
		}
	}
	png, err := picture.Board(in, th)
	return png, in.AltText(), err
}
