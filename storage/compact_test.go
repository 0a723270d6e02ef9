package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
)

// TestBackupHoldsOnlyLiveData: a value deleted or replaced before a backup is not in the backup
// (bbolt leaves it in the page it freed, and tx.WriteTo, which Backup used before, copies free
// pages too).
func TestBackupHoldsOnlyLiveData(t *testing.T) {
	s, _ := openTemp(t, Options{})
	const gone = "a value deleted before the backup"
	for i := range 20 {
		if err := s.Put("b", fmt.Sprint("k", i), []byte(fmt.Sprint(gone, i))); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("state: " + gone), Log: entry(1, table.VerbNew)})
	for i := range 20 {
		if err := s.Delete("b", fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("state now"), Log: entry(2, table.VerbJoin)})
	var buf bytes.Buffer
	if _, err := s.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backup.db")
	if err := s.BackupFile(file); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"Backup": buf.Bytes(), "BackupFile": saved} {
		if n := bytes.Count(b, []byte(gone)); n > 0 {
			t.Errorf("%s holds the deleted value %d times", name, n)
		}
		if !bytes.Contains(b, []byte("state now")) {
			t.Errorf("%s lacks what is kept", name)
		}
	}
}
