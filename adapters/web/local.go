package web

import (
	"context"
	"errors"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// LocalPlace is the place of the table a person plays at this machine's browser (bot -web): the
// web's own, as the terminal's table is the terminal's. Its messages go to the web server's
// Deliver, which only tells the page that the table changed.
var LocalPlace = api.Place{Platform: Platform, Chat: "local"}

// LocalTable gives the link to the table of p at LocalPlace with three computer players: the one
// there (a match stored by an earlier run resumes, a finished one offers a rematch in the page),
// else a new table with options opts, dealt at once. The link is for p alone and can be redeemed
// once; a reload keeps the page's session.
func (s *Server) LocalTable(ctx context.Context, p api.Player, opts []string) (string, error) {
	svc := s.service()
	if svc == nil {
		return "", errors.New("web: LocalTable before Attach")
	}
	do := func(v api.Verb, args ...string) error {
		replies, err := svc.Handle(ctx, api.Command{Place: LocalPlace, Actor: p, Verb: v, Args: args, Admin: true})
		for _, r := range replies {
			if r.Kind == api.KindError {
				return errors.New(r.Text)
			}
		}
		return err
	}
	id := svc.TableAt(LocalPlace)
	var v SeatView
	ok := false
	if id != "" {
		v, ok = s.SeatView(ctx, id, p)
	}
	if !ok || v.Status == api.StatusClosed {
		if err := do(api.VerbNew, opts...); err != nil {
			return "", err
		}
		id = svc.TableAt(LocalPlace)
		v, _ = s.SeatView(ctx, id, p)
	}
	if v.Status == api.StatusLobby {
		if err := do(api.VerbDeal); err != nil {
			return "", err
		}
	}
	return s.Link(p, id)
}
