package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// Platform is a chat platform (or the web table) as operations see it: its name, and what it
// can tell of itself through the optional interfaces below.
type Platform interface {
	Name() string
}

// Optional reports a Platform may give; metrics and health read each one a platform has.
type (
	// ConnectedReporter knows whether the platform is reachable (and, where the platform asks
	// for it, whether it sees the bot as ready: a webhook's pending updates and last error).
	ConnectedReporter interface{ Connected() error }
	// OutboxReporter tells what the platform's outbox did.
	OutboxReporter interface {
		OutboxStats() (sent, dropped, failed, rateLimited uint64, queued int)
	}
	// SocketReporter counts the web sockets open now.
	SocketReporter interface{ Sockets() int }
	// RefusalReporter counts the posts its webhook (or interactions endpoint) refused: no secret,
	// a bad signature, not a POST, a body too large.
	RefusalReporter interface{ WebhookRefusals() uint64 }
	// UpdateReporter tells when the platform last brought an update (zero: never).
	UpdateReporter interface{ LastUpdate() time.Time }
	// WebhookReporter gives the platform's own view of the bot's webhook (Telegram's
	// getWebhookInfo) in one line, and an error when it keeps this copy from being ready.
	WebhookReporter interface{ WebhookState() (string, error) }
)

// Health answers /readyz (and /healthz): 200 when the store takes a write, more's parts are fine
// (the store's: StoreHealth) and every platform is connected, else 503; the body says each
// part's state.
func Health(store table.KV, platforms []Platform, more func(ctx context.Context, state map[string]string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		state := map[string]string{}
		ok := more == nil || more(ctx, state)
		if err := store.Put(ctx, "health", "probe", []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
			state["database"], ok = "not writable: "+err.Error(), false
		} else {
			state["database"] = "ok"
		}
		for _, p := range platforms {
			cr, reports := p.(ConnectedReporter)
			switch {
			case !reports:
				state[p.Name()] = "running"
			case cr.Connected() != nil:
				state[p.Name()], ok = fmt.Sprint("not connected: ", cr.Connected()), false
			default:
				state[p.Name()] = "connected"
			}
			if wr, reports := p.(WebhookReporter); reports {
				line, err := wr.WebhookState()
				if line != "" {
					state[p.Name()+" webhook"] = line
				}
				if err != nil {
					ok = false
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(state)
	})
}

// StoreHealth adds the store's parts to the health answer: which store it is (described), whether
// the etcd cluster has a quorum (a member with a leader answers) and an alarm raised, and the
// leases this copy holds. It reports whether they are fine. Both questions to etcd carry the
// request's context, each bounded by half the health check's time.
func StoreHealth(described string, store any, leases table.Leases) func(ctx context.Context, state map[string]string) bool {
	return func(ctx context.Context, state map[string]string) bool {
		held := leases.Held()
		state["leases"] = strings.Join(held, ",")
		if len(held) == 0 {
			state["leases"] = "none (another copy holds them)"
		}
		state["store"] = described
		st, ok := store.(*etcdstore.Store)
		if !ok {
			return true
		}
		rctx, cancel := context.WithTimeout(ctx, HealthTimeout/2)
		defer cancel()
		if _, err := st.Revision(rctx); err != nil { // asked of a member with a leader
			state["quorum"] = "lost: " + err.Error()
			return false
		}
		state["quorum"] = "ok"
		// A raised alarm (NOSPACE: a member's database reached its quota) refuses every write
		// until the host mends it (docs/cluster.md).
		actx, cancel := context.WithTimeout(ctx, HealthTimeout/2)
		defer cancel()
		alarms, err := st.Alarms(actx)
		switch {
		case err != nil:
			state["alarms"] = "unknown: " + err.Error()
			return false
		case len(alarms) > 0:
			state["alarms"] = strings.Join(alarms, ", ")
			return false
		}
		state["alarms"] = "none"
		return true
	}
}
