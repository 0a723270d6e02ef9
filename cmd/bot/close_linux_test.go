//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCloseSaysTheDatabaseDidNotClose: when the database cannot be closed cleanly (here its file
// descriptor is gone from under it, as after an I/O error), Main.Close says so, naming the file,
// instead of reporting a clean stop.
func TestCloseSaysTheDatabaseDidNotClose(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	var screen, log strings.Builder
	m := &Main{Config: Config{Database: db, LogLevel: "info", LogFormat: "text"}, Terminal: TerminalFlags{Humans: 0, Level: "easy"},
		Stdout: &screen, Stderr: &log}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	closeUnder(t, db)
	err := m.Close()
	if err == nil || !strings.Contains(err.Error(), db) || !strings.Contains(err.Error(), "did not close cleanly") {
		t.Errorf("Close with a database that cannot close: %v", err)
	}
	m2 := &Main{Config: Config{Database: filepath.Join(t.TempDir(), "ok.db"), LogLevel: "info", LogFormat: "text"},
		Terminal: TerminalFlags{Humans: 0, Level: "easy"}, Stdout: &screen, Stderr: &log}
	if err := m2.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m2.Close(); err != nil {
		t.Errorf("a clean Close: %v", err)
	}
}

// closeUnder closes this process's file descriptor of path behind its owner's back.
func closeUnder(t *testing.T, path string) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == path {
			n, _ := strconv.Atoi(fd.Name())
			if err := syscall.Close(n); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no file descriptor of %s", path)
}
