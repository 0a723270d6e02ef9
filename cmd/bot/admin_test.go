package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// openMarked opens a new database that says whose it is, in a KV entry a backup must carry.
func openMarked(t *testing.T, path, owner string) *storage.Store {
	ctx := t.Context()
	t.Helper()
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "test", "owner", []byte(owner)); err != nil {
		t.Fatal(err)
	}
	return st
}

// ownerOf opens a backup and says whose database it is.
func ownerOf(t *testing.T, path string) string {
	ctx := t.Context()
	t.Helper()
	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the backup does not open: %v", err)
	}
	defer st.Close()
	v, _, err := st.Get(ctx, "test", "owner")
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// startAdmin starts an admin door for st as serve does, logging into the returned buffer.
func startAdmin(t *testing.T, a *ops.Admin) *tabletest.Buffer {
	t.Helper()
	logs := &tabletest.Buffer{}
	a.Log = slog.New(slog.NewTextHandler(logs, nil))
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return logs
}

// backupCmd runs `bot backup -db DB OUT` in this process with the given environment.
func backupCmd(t *testing.T, db, out string, env ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var o, e bytes.Buffer
	code = run([]string{"backup", "-db", db, out}, nil, &o, &e)
	return code, o.String(), e.String()
}

// TestBackupReachesTheBotThatHoldsTheDatabase runs two bots with the default config: backing up
// either's database gets that database, through the socket beside it, which only its user may use.
func TestBackupReachesTheBotThatHoldsTheDatabase(t *testing.T) {
	bin := buildBot(t)
	dir := t.TempDir()
	dbs := map[string]string{"A": filepath.Join(dir, "a.db"), "B": filepath.Join(dir, "b.db")}
	var stops []func()
	for owner, db := range dbs {
		openMarked(t, db, owner).Close()
		stops = append(stops, startBot(t, bin, db))
	}
	for owner, db := range dbs {
		fi, err := os.Stat(db + ".sock")
		if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s.sock: %v, %v; want a socket of mode 0600", db, fi.Mode(), err)
		}
		out := filepath.Join(t.TempDir(), "backup.db")
		code, stdout, stderr := runBin(t, bin, "backup", "-db", db, out)
		if code != 0 {
			t.Fatalf("backup -db %s: exit %d: %s", db, code, stderr)
		}
		if got := ownerOf(t, out); got != owner {
			t.Errorf("backup -db %s holds %q's database, want %q's", db, got, owner)
		}
		if want := "via " + db + ".sock"; !strings.Contains(stdout, want) {
			t.Errorf("backup says %q, want it to name the socket (%s)", stdout, want)
		}
	}
	for _, stop := range stops {
		stop()
	}
	for _, db := range dbs {
		if _, err := os.Lstat(db + ".sock"); err == nil {
			t.Errorf("%s.sock is still there after the bot stopped", db)
		}
	}
}

func TestAdminSocket(t *testing.T) {
	t.Run("a crashed bot's socket is replaced", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "k.db")
		ln, err := net.Listen("unix", db+".sock")
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false) // as a SIGKILL leaves it
		ln.Close()
		st := openMarked(t, db, "me")
		defer st.Close()
		logs := startAdmin(t, &ops.Admin{Store: st, Socket: db + ".sock"})
		out := filepath.Join(t.TempDir(), "b.db")
		if code, _, stderr := backupCmd(t, db, out); code != 0 || ownerOf(t, out) != "me" {
			t.Errorf("backup: exit %d, %s\nbot log: %s", code, stderr, logs)
		}
	})
	// Anything else at the socket's path is left alone, and the bot does not start: one line says
	// why and what to do.
	refused := func(t *testing.T, db, why string) {
		t.Helper()
		st := openMarked(t, db, "me")
		defer st.Close()
		a := &ops.Admin{Store: st, Socket: db + ".sock", Log: slog.New(slog.DiscardHandler)}
		err := a.Start()
		defer a.Close()
		if !errors.Is(err, ops.ErrSocketInTheWay) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), db+".sock") ||
			strings.Contains(err.Error(), "\n") {
			t.Fatalf("Start: %v", err)
		}
	}
	t.Run("a file that is not a socket", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "k.db")
		if err := os.WriteFile(db+".sock", []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, db, "it is not a socket")
		if data, _ := os.ReadFile(db + ".sock"); string(data) != "mine" {
			t.Errorf("the file was changed: %q", data)
		}
	})
	t.Run("a socket something listens on", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "k.db")
		ln, err := net.Listen("unix", db+".sock")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		refused(t, db, "something listens on it")
		if c, err := net.Dial("unix", db+".sock"); err != nil {
			t.Errorf("the listener's socket is gone: %v", err)
		} else {
			c.Close()
		}
	})
	t.Run("the socket goes with the bot", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "k.db")
		st := openMarked(t, db, "me")
		defer st.Close()
		a := &ops.Admin{Store: st, Socket: db + ".sock"}
		startAdmin(t, a)
		a.Close()
		if _, err := os.Lstat(db + ".sock"); err == nil {
			t.Error("the socket is still there after Close")
		}
	})
}

// longDir makes a directory whose path is n bytes long.
func longDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for len(dir) < n-40 {
		dir = filepath.Join(dir, strings.Repeat("d", 30))
	}
	dir = filepath.Join(dir, strings.Repeat("e", n-len(dir)-1))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAdminSocketPathTooLong: a database whose socket path does not fit a unix socket address
// runs without the socket and says so; backup says why it cannot reach the bot, or uses the TCP
// listener if there is one.
func TestAdminSocketPathTooLong(t *testing.T) {
	db := filepath.Join(longDir(t, ops.MaxSocketPath), "k.db") // k.db.sock is over by 9 bytes
	st := openMarked(t, db, "far")
	defer st.Close()
	token := "0123456789abcdef-long-path"
	a := &ops.Admin{Store: st, Socket: db + ".sock", Addr: "127.0.0.1:0", Token: token}
	logs := startAdmin(t, a)
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "too long for a unix socket") {
		t.Errorf("no clear warning: %s", logs)
	}
	if _, err := os.Lstat(db + ".sock"); err == nil {
		t.Error("a socket file was made")
	}
	out := filepath.Join(t.TempDir(), "b.db")
	code, _, stderr := backupCmd(t, db, out)
	if code != 1 || !strings.Contains(stderr, "too long for a unix socket") {
		t.Errorf("backup without TCP: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := backupCmd(t, db, out, "KONTERMATT_ADMIN_ADDR="+a.TCPAddr().String(), "KONTERMATT_ADMIN_TOKEN="+token)
	if code != 0 || ownerOf(t, out) != "far" || !strings.Contains(stdout, "via "+a.TCPAddr().String()) {
		t.Errorf("backup over TCP: exit %d, %q, %q", code, stdout, stderr)
	}
}

// TestAdminSocketPathTooLongServe: the bot itself starts and plays; its start line says backups
// cannot reach it, and no log warning breaks into the game's screen.
func TestAdminSocketPathTooLongServe(t *testing.T) {
	bin := buildBot(t)
	db := filepath.Join(longDir(t, ops.MaxSocketPath), "k.db")
	out, stop := startBotOut(t, bin, db)
	stop()
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.Contains(first, "no admin socket") {
		t.Errorf("the start line does not say so:\n%s", out)
	}
	if strings.Contains(out.String(), "level=WARN") {
		t.Errorf("a warning in the game's screen:\n%s", out)
	}
}

// startBotOut is startBot that also gives the bot's output, and waits on it without polling.
func startBotOut(t *testing.T, bin, db string) (*tabletest.Buffer, func()) {
	t.Helper()
	out := &tabletest.Buffer{}
	cmd := exec.Command(bin, "-db", db, "-level", "easy", "-seed", "5")
	cmd.Env = hostEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	out.WaitFor(t, "Type one of", 20*time.Second)
	return out, func() {
		stopped = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("bot exited with %v:\n%s", err, out.String())
		}
	}
}

// TestAdminTCP: the TCP listener wants the token and a Host header naming it; the token shows in
// no answer and no log line.
func TestAdminTCP(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	st := openMarked(t, db, "tcp")
	defer st.Close()
	token := "SECRET-0123456789abcdef"
	a := &ops.Admin{Store: st, Addr: "127.0.0.1:0", Token: token, Metrics: ops.NewMetrics(buildLabels()).Handler()}
	logs := startAdmin(t, a)
	addr := a.TCPAddr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		name, path, host, auth string
		want                   int
	}{
		{"no token", "/metrics", addr, "", http.StatusUnauthorized},
		{"wrong token", "/metrics", addr, "Bearer SECRET-0123456789abcdeX", http.StatusUnauthorized},
		{"token without Bearer", "/metrics", addr, token, http.StatusUnauthorized},
		{"wrong token for backup", "/backup", addr, "Bearer nope", http.StatusUnauthorized},
		{"rebound DNS name", "/metrics", "evil.example:" + port, "Bearer " + token, http.StatusForbidden},
		{"another port", "/metrics", "127.0.0.1:1", "Bearer " + token, http.StatusForbidden},
		{"no port", "/metrics", "127.0.0.1", "Bearer " + token, http.StatusForbidden},
		{"metrics", "/metrics", addr, "Bearer " + token, http.StatusOK},
		{"metrics by localhost", "/metrics", "localhost:" + port, "Bearer " + token, http.StatusOK},
		{"backup", "/backup", addr, "Bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+tc.path, nil)
			req.Host = tc.host
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if bytes.Contains(body, []byte("SECRET")) {
				t.Errorf("the answer shows the token: %.200s", body)
			}
		})
	}
	t.Run("backup command with the token", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "b.db")
		code, stdout, stderr := backupCmd(t, db, out, "KONTERMATT_ADMIN_ADDR="+addr, "KONTERMATT_ADMIN_TOKEN="+token)
		if code != 0 || ownerOf(t, out) != "tcp" || !strings.Contains(stdout, "via "+addr) {
			t.Errorf("exit %d, %q, %q", code, stdout, stderr)
		}
	})
	t.Run("backup command with a wrong token", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "b.db")
		code, stdout, stderr := backupCmd(t, db, out, "KONTERMATT_ADMIN_ADDR="+addr, "KONTERMATT_ADMIN_TOKEN=SECRET-wrong-token-xyz")
		if code != 1 || !strings.Contains(stderr, "refused the admin token") || strings.Contains(stdout+stderr, "SECRET") {
			t.Errorf("exit %d, %q, %q", code, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("a refused backup wrote a file")
		}
	})
	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("the log shows the token:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "wrong token") {
		t.Errorf("refused requests are not logged:\n%s", logs)
	}
}

// TestLiveBackupOfADamagedDatabase: when the file is damaged under the running bot, the copy it
// sends is damaged too, and backup says so in one line instead of keeping the copy.
func TestLiveBackupOfADamagedDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	fillDatabase(t, db)
	var leaves []int
	var pageSize int
	bdb, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	bdb.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == "leaf" {
				leaves = append(leaves, id)
			}
		}
	})
	pageSize = bdb.Info().PageSize
	bdb.Close()

	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	startAdmin(t, &ops.Admin{Store: st, Socket: db + ".sock"})
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range leaves {
		f.WriteAt(bytes.Repeat([]byte{0x5a}, pageSize), int64(id*pageSize))
	}
	f.Close()

	out := filepath.Join(t.TempDir(), "b.db")
	code, _, stderr := backupCmd(t, db, out)
	if want := "backup: " + db + " is damaged: restore it from a backup\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, %q; want 1 and %q", code, stderr, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("the damaged copy was kept: %v", entries)
	}
}

// TestAdminTCPNeverWithoutToken: built without a token, the admin door opens no TCP port.
func TestAdminTCPNeverWithoutToken(t *testing.T) {
	st := openMarked(t, filepath.Join(t.TempDir(), "k.db"), "me")
	defer st.Close()
	a := &ops.Admin{Store: st, Addr: "127.0.0.1:0"}
	logs := startAdmin(t, a)
	if a.TCPAddr() != nil || !strings.Contains(logs.String(), "needs an admin_token") {
		t.Errorf("listening on %v; log: %s", a.TCPAddr(), logs)
	}
}

// fillBig grows the database to about mb MiB.
func fillBig(t *testing.T, st *storage.Store, bucket string, mb int) {
	ctx := t.Context()
	t.Helper()
	val := bytes.Repeat([]byte{'x'}, 1<<20)
	for i := range mb {
		if err := st.Put(ctx, bucket, fmt.Sprint(i), val); err != nil {
			t.Fatal(err)
		}
	}
}

// stallBackup asks the socket for a backup, reads the status and headers, and then reads no more:
// the server is sending the body. The socket buffers hold far less than the database.
func stallBackup(t *testing.T, sock string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, "GET /backup HTTP/1.1\r\nHost: kontermatt\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup: %v, %v", resp, err)
	}
	return conn
}

// snapshots lists the snapshot files beside the database.
func snapshots(t *testing.T, db string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(filepath.Dir(db), ".*.snapshot-*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestAdminBackupStalledClient: a client that stops reading a backup keeps no read transaction
// open, so commits that make bbolt remap the growing file go on; a second backup meanwhile is
// refused; and the bot shuts down in bounded time, leaving no snapshot behind.
func TestAdminBackupStalledClient(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "k.db")
	st := openMarked(t, db, "me")
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	fillBig(t, st, "fill", 16)
	a := &ops.Admin{Store: st, Socket: db + ".sock", Grace: 100 * time.Millisecond}
	startAdmin(t, a)
	stallBackup(t, db+".sock")

	// 40 MiB more takes the file past the 32 MiB that bbolt maps for 16, so some commit remaps.
	committed := make(chan error, 1)
	go func() {
		val := bytes.Repeat([]byte{'y'}, 4<<20)
		for i := range 10 {
			if err := st.Put(ctx, "grow", fmt.Sprint(i), val); err != nil {
				committed <- err
				return
			}
		}
		committed <- nil
	}()
	select {
	case err := <-committed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("commits that grow the file are blocked by a stalled backup client")
	}

	resp, err := (&http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", db+".sock")
	}}}).Get("http://kontermatt/backup")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "another backup") {
		t.Errorf("second backup at once: %s %q", resp.Status, body)
	}

	stopped := make(chan struct{})
	go func() {
		a.Close()
		st.Close()
		close(stopped)
	}()
	select {
	case <-stopped:
		closed = true
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown hangs on a stalled backup client")
	}
	if files := snapshots(t, db); len(files) != 0 {
		t.Errorf("snapshots left behind: %v", files)
	}
}

// TestAdminBackupDeadline: a client that stalls is cut when its time is up, and the backup ends:
// Close, which waits for the backup being sent and takes its place, returns at once, and the
// snapshot is gone.
func TestAdminBackupDeadline(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	st := openMarked(t, db, "me")
	defer st.Close()
	fillBig(t, st, "fill", 8)
	a := &ops.Admin{Store: st, Socket: db + ".sock", Grace: time.Minute,
		BackupTime: func(int64) time.Duration { return 200 * time.Millisecond }}
	logs := startAdmin(t, a)
	stallBackup(t, db+".sock")
	logs.WaitFor(t, "live backup not fully sent", 30*time.Second)
	// net/http closes the connection on the failed write, before the handler's cleanup runs, so
	// the client's view cannot tell when the backup ended; Close can.
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second): // far below the minute of grace
		t.Fatal("the cut backup is still holding its place")
	}
	if files := snapshots(t, db); len(files) != 0 {
		t.Errorf("snapshots left behind: %v", files)
	}
}

// TestAdminRemovesStaleSnapshots: a crashed bot's snapshot (a whole copy of the database) does not
// stay on the disk.
func TestAdminRemovesStaleSnapshots(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	stale := filepath.Join(filepath.Dir(db), ".k.db.snapshot-123")
	if err := os.WriteFile(stale, []byte("old copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(db), ".other.db.snapshot-123")
	if err := os.WriteFile(other, []byte("another database's"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := openMarked(t, db, "me")
	defer st.Close()
	startAdmin(t, &ops.Admin{Store: st, Socket: db + ".sock"})
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale snapshot is still there")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another database's file was removed: %v", err)
	}
}

// TestForeignAdminSocketStopsTheStart: a socket at DATABASE.sock that something listens on is
// not this bot's stale socket: the bot leaves it alone and does not start, in one line, exit 1.
func TestForeignAdminSocketStopsTheStart(t *testing.T) {
	bin := buildBot(t)
	db := filepath.Join(t.TempDir(), "k.db")
	ln, err := net.Listen("unix", db+".sock")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	code, stdout, stderr := runBin(t, bin, "-db", db, "-humans", "0", "-pace", "0", "-level", "easy", "-options", "stripes=1")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, db+".sock") || !strings.Contains(stderr, "listens") {
		t.Errorf("exit %d, stderr %q, stdout %d bytes", code, stderr, len(stdout))
	}
	if c, err := net.Dial("unix", db+".sock"); err != nil {
		t.Errorf("the other listener's socket is gone: %v", err)
	} else {
		c.Close()
	}
}
