package main

import (
	"io"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestBackupByAnotherProcessShows (issue 32): a bot runs on etcd; `kontermatt backup` run as a
// second process (the built binary, the same configuration) makes a backup, and the running
// bot's kontermatt_last_backup_timestamp_seconds, 0 before, gives that backup's time: every
// backup notes its time in the store, which the series reads, so a backup made elsewhere than
// through this process's admin door shows too.
func TestBackupByAnotherProcessShows(t *testing.T) {
	bin := buildBot(t)
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	useEtcd(t, c, "backups/")
	m := openOnEtcd(t, io.Discard, nil)
	lastBackup := func() float64 {
		t.Helper()
		rec := httptest.NewRecorder()
		m.admin.Metrics.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "kontermatt_last_backup_timestamp_seconds "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				return f
			}
		}
		t.Fatal("no kontermatt_last_backup_timestamp_seconds in the metrics")
		return 0
	}
	if v := lastBackup(); v != 0 {
		t.Errorf("before any backup the series is %v, want 0", v)
	}
	before := time.Now().Unix()
	out := filepath.Join(t.TempDir(), "backup.db")
	if b, err := exec.Command(bin, "backup", out).CombinedOutput(); err != nil {
		t.Fatalf("backup in another process: %v\n%s", err, b)
	}
	after := time.Now().Unix()
	if v := lastBackup(); v < float64(before) || v > float64(after) {
		t.Errorf("after a backup by another process the series is %v, want its time (%d to %d)", v, before, after)
	}
}
