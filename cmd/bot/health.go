package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// healthTimeout bounds one health question: a container's health check gives up after its own
// timeout (the Dockerfile's is 10 s), and a bot that does not answer within this is not healthy.
const healthTimeout = 5 * time.Second

// runHealth asks the running bot that holds the database whether it is ready (GET /readyz on
// its admin socket, or on admin_addr: what /healthz answers too): exit 0 with "healthy: …", else exit 1 with what is not.
// It is the container's health check: the image has no shell and no curl.
func runHealth(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	cfg, code, done := dbFlags("health", args, 0, stdout, stderr)
	if done {
		return code
	}
	line, healthy := askHealth(cfg)
	if !healthy {
		fmt.Fprintln(stdout, "not healthy: "+line)
		return 1
	}
	fmt.Fprintln(stdout, "healthy: "+line)
	return 0
}

// askHealth asks the bot and says in one line what it answered.
func askHealth(cfg Config) (line string, healthy bool) {
	sock := cfg.Database + ".sock"
	if fi, err := os.Lstat(sock); (err != nil || fi.Mode().Type() != fs.ModeSocket) && cfg.AdminAddr == "" {
		return fmt.Sprintf("no bot runs with %s (no admin socket at %s)", cfg.Database, sock), false
	}
	peer, err := findAdmin(cfg)
	if err != nil {
		return err.Error(), false
	}
	peer.client.Timeout = healthTimeout
	var resp *http.Response
	// Readiness; /healthz from a bot older than /readyz (an upgrade one copy at a time).
	for _, path := range []string{"/readyz", "/healthz"} {
		req, err := http.NewRequest(http.MethodGet, peer.url+path, nil)
		if err != nil {
			return err.Error(), false
		}
		if peer.token != "" {
			req.Header.Set("Authorization", "Bearer "+peer.token)
		}
		resp, err = peer.client.Do(req)
		if err != nil {
			return fmt.Sprintf("the bot did not answer on %s: %v", peer.via, err), false
		}
		if resp.StatusCode != http.StatusNotFound {
			break
		}
		resp.Body.Close()
	}
	defer resp.Body.Close()
	var state map[string]string
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err := json.Unmarshal(body, &state); err != nil || len(state) == 0 {
		return fmt.Sprintf("the bot on %s answered %s: %s", peer.via, resp.Status, strings.TrimSpace(string(body))), false
	}
	// The parts that are not fine first, then the rest, each in a stable order.
	var bad, good []string
	for _, k := range slices.Sorted(maps.Keys(state)) {
		part := k + " " + state[k]
		if state[k] == "ok" || state[k] == "connected" || state[k] == "running" || k == "store" || k == "leases" || k == "alarms" && state[k] == "none" {
			good = append(good, part)
		} else {
			bad = append(bad, part)
		}
	}
	return strings.Join(append(bad, good...), "; "), resp.StatusCode == http.StatusOK
}

// storeHealth adds the store's parts to /healthz: which store it is, whether the etcd cluster
// has a quorum (a member with a leader answers) and an alarm raised, and the leases this copy
// holds. It reports
// whether they are fine.
// Both questions to etcd carry the /healthz request's context, each bounded by half the health
// check's time.
func storeHealth(cfg Config, store botStore, leases table.Leases) func(ctx context.Context, state map[string]string) bool {
	return func(ctx context.Context, state map[string]string) bool {
		held := leases.Held()
		state["leases"] = strings.Join(held, ",")
		if len(held) == 0 {
			state["leases"] = "none (another copy holds them)"
		}
		st, ok := store.(*etcdstore.Store)
		if !ok {
			state["store"] = "bbolt " + cfg.Database
			return true
		}
		state["store"] = describeStore(cfg)
		rctx, cancel := context.WithTimeout(ctx, healthTimeout/2)
		defer cancel()
		if _, err := st.Revision(rctx); err != nil { // asked of a member with a leader
			state["quorum"] = "lost: " + err.Error()
			return false
		}
		state["quorum"] = "ok"
		// A raised alarm (NOSPACE: a member's database reached its quota) refuses every write
		// until the host mends it (docs/cluster.md).
		actx, cancel := context.WithTimeout(ctx, healthTimeout/2)
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
