package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/storage"
)

// Target is how the one-shot commands (backup, health) reach a running bot's admin door: its
// socket, else its loopback TCP listener with the token. Holds names what the bot holds, for
// messages: the database file, or the etcd cluster.
type Target struct {
	Socket string
	Addr   string
	Token  string // sent only over TCP; never in a message
	Holds  string
}

// HealthTimeout bounds one health question: a container's health check gives up after its own
// timeout (the Dockerfile's is 10 s), and a bot that does not answer within this is not healthy.
const HealthTimeout = 5 * time.Second

// damagedHeader marks a live backup that failed because the database is damaged.
const damagedHeader = "Kontermatt-Damaged"

// FetchBackup gets a live backup from the running bot: through its socket, or, when there is
// none and the TCP listener is set, over TCP with the token. The copy is checked (it must open)
// before it replaces out. It says which way it went. A damaged database's error wraps
// storage.ErrDamaged.
func FetchBackup(t Target, out string) (via string, err error) {
	peer, err := findAdmin(t)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodGet, peer.url+"/backup", nil)
	if err != nil {
		return "", err
	}
	if peer.token != "" {
		req.Header.Set("Authorization", "Bearer "+peer.token)
	}
	resp, err := peer.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s is in use, and the running bot did not answer on %s: %w", t.Holds, peer.via, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return "", fmt.Errorf("the running bot on %s refused the admin token (%s): check admin_token", peer.via, resp.Status)
	case http.StatusInternalServerError:
		if resp.Header.Get(damagedHeader) != "" {
			return "", fmt.Errorf("the running bot's live backup: %w", storage.ErrDamaged)
		}
		fallthrough
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return "", fmt.Errorf("the running bot on %s answered %s: %s", peer.via, resp.Status, strings.TrimSpace(string(body)))
	}
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = io.Copy(f, resp.Body) // a body shorter than its Content-Length is an error here
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = fmt.Errorf("receiving the backup from %s: %w", peer.via, err)
	} else if err = checkCopy(tmp); err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return peer.via, nil
}

// checkCopy opens a received copy read-only, which reads every page of it. A copy made by a newer
// bot than this one is fine to keep even if this binary cannot read it.
func checkCopy(path string) error {
	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	switch {
	case err == nil:
		return st.Close()
	case errors.Is(err, storage.ErrNewerSchema):
		return nil
	case errors.Is(err, storage.ErrDamaged):
		return err
	}
	return fmt.Errorf("the running bot's backup does not open: %w", err)
}

// adminPeer is the way to a running bot's admin door.
type adminPeer struct {
	client *http.Client
	url    string
	via    string // the socket's path or the TCP address, for messages
	token  string // sent only over TCP
}

// findAdmin picks the way to the running bot: its socket if it is there, else the configured TCP
// listener.
func findAdmin(t Target) (adminPeer, error) {
	sock := t.Socket
	// The server sets its own deadline for the body; a bot that never answers at all is cut here.
	transport := &http.Transport{ResponseHeaderTimeout: 10 * time.Minute}
	client := &http.Client{Transport: transport}
	fi, statErr := os.Lstat(sock)
	switch {
	case sock != "" && statErr == nil && fi.Mode().Type() == fs.ModeSocket && len(sock) <= MaxSocketPath:
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}
		return adminPeer{client: client, url: "http://kontermatt", via: sock}, nil
	case t.Addr != "":
		return adminPeer{client: client, url: "http://" + t.Addr, via: t.Addr, token: t.Token}, nil
	case len(sock) > MaxSocketPath:
		return adminPeer{}, fmt.Errorf("%s is in use by a running bot, which cannot have its admin socket: %s is %d bytes, %w (at most %d); move the database to a shorter path (or set admin_socket), or set admin_addr and admin_token",
			t.Holds, sock, len(sock), ErrSocketTooLong, MaxSocketPath)
	}
	return adminPeer{}, fmt.Errorf("%s is in use by a running bot, but there is no admin socket at %s (a bot older than this command?)", t.Holds, sock)
}

// AskHealth asks the running bot whether it is ready (GET /readyz: what /healthz answers too), or
// with live whether it is live (GET /livez), and says in one line what it answered: the parts
// that are not fine first.
func AskHealth(t Target, live bool) (line string, healthy bool) {
	if fi, err := os.Lstat(t.Socket); (err != nil || fi.Mode().Type() != fs.ModeSocket) && t.Addr == "" {
		return fmt.Sprintf("no bot runs with %s (no admin socket at %s)", t.Holds, t.Socket), false
	}
	peer, err := findAdmin(t)
	if err != nil {
		return err.Error(), false
	}
	peer.client.Timeout = HealthTimeout
	var resp *http.Response
	// Readiness; /healthz from a bot older than /readyz (an upgrade one copy at a time).
	paths := []string{"/readyz", "/healthz"}
	if live {
		paths = []string{"/livez"}
	}
	for _, path := range paths {
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
	var bad, good []string
	for _, k := range slices.Sorted(maps.Keys(state)) {
		part := k + " " + state[k]
		if state[k] == "ok" || strings.HasPrefix(state[k], "ok, ") || k == "live" || state[k] == "connected" || state[k] == "running" || k == "store" || k == "leases" || k == "alarms" && state[k] == "none" {
			good = append(good, part)
		} else {
			bad = append(bad, part)
		}
	}
	return strings.Join(append(bad, good...), "; "), resp.StatusCode == http.StatusOK
}
