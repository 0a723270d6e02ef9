package web

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A socket's session is checked again at every move and every Config.RecheckEvery: a session
// that expired ends the socket, and so does a Discord member who no longer takes part in the
// channel's Activity (Discord's participants of the instance, asked with the bot's token).

// memberMaxAge is how long Discord's list of an instance's participants is taken as it stands:
// a move asks again only after that, one question answering for every socket of the instance.
const memberMaxAge = 30 * time.Second

// sessionEnded says why a session no longer holds at now: the catalog key of the reason, ""
// while it holds. When Discord cannot be asked, the session holds until the next check.
func (s *Server) sessionEnded(ctx context.Context, t ticket, now time.Time) string {
	if now.Unix() >= t.Exp {
		return "web.session_over"
	}
	if t.Via == "discord" && t.Inst != "" && s.cfg.Discord != nil {
		if in, known := s.members.has(ctx, s.cfg.Discord, t.Inst, t.Player, now); known && !in {
			return "web.left_activity"
		}
	}
	return ""
}

// recheck checks every open socket's session each Config.RecheckEvery, until ctx ends.
func (s *Server) recheck(ctx context.Context) {
	tick := time.NewTicker(s.cfg.RecheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, k := range s.hub.all() {
			if why := s.sessionEnded(ctx, k.t, s.cfg.Now()); why != "" {
				k.end(why)
			}
		}
	}
}

// members keeps what Discord last said of each Activity instance's participants.
type members struct {
	mu     sync.Mutex
	byInst map[string]memberList
}

type memberList struct {
	players []string
	known   bool      // false: Discord could not be asked
	at      time.Time // when Discord was asked
}

func (m *members) init() { m.byInst = map[string]memberList{} }

// has says whether player takes part in the instance, as Discord said at most memberMaxAge ago
// (else it is asked now); known is false while Discord cannot be asked.
func (m *members) has(ctx context.Context, dc Discord, inst, player string, now time.Time) (in, known bool) {
	m.mu.Lock()
	l, ok := m.byInst[inst]
	m.mu.Unlock()
	if !ok || now.Sub(l.at) >= memberMaxAge {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ps, err := dc.ActivityPlayers(actx, inst)
		cancel()
		if err == nil {
			l = memberList{players: ps, known: true, at: now}
		} else {
			l.at = now // what Discord said before stands until it is asked again
		}
		m.mu.Lock()
		for k, old := range m.byInst {
			if now.Sub(old.at) > 10*memberMaxAge {
				delete(m.byInst, k) // no socket asked for it lately
			}
		}
		m.byInst[inst] = l
		m.mu.Unlock()
	}
	return slices.Contains(l.players, player), l.known
}
