package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readJSON reads one JSON object.
func readJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, data)
	}
	return m
}

// checkSubset checks that every key of want is in got with the same value (docs/records.md allows
// extra keys in the output).
func checkSubset(t *testing.T, got, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
}

func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/example-*.expected.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	return files
}

func TestReplayFile(t *testing.T) {
	for _, exp := range examples(t) {
		in := strings.TrimSuffix(exp, ".expected.json") + ".json"
		t.Run(filepath.Base(in), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"replay", in}, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, stderr %s, stdout %s", code, stderr.String(), stdout.String())
			}
			want, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			checkSubset(t, readJSON(t, stdout.Bytes()), readJSON(t, want))
			if stderr.Len() != 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}

func TestReplayStdin(t *testing.T) {
	exp := examples(t)[0]
	data, err := os.ReadFile(strings.TrimSuffix(exp, ".expected.json") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(exp)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "-"}, bytes.NewReader(data), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	checkSubset(t, readJSON(t, stdout.Bytes()), readJSON(t, want))
}

func TestReplayBadRecord(t *testing.T) {
	// Example 1 with seat 1 playing at move 1, when seat 0 (forehand) is to lead.
	data, err := os.ReadFile("../../testdata/example-01.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`{"seat": 0, "play": "AH"}`), []byte(`{"seat": 1, "play": "KS"}`), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("example-01.json changed: the test no longer makes a bad record")
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin []byte
		code  string
		move  float64
	}{
		{"file", []string{"replay", path}, nil, "not_your_turn", 1},
		{"stdin", []string{"replay", "-"}, bad, "not_your_turn", 1},
		{"not JSON", []string{"replay", "-"}, []byte("konter a matt"), "bad_record", -1},
		{"empty", []string{"replay", "-"}, nil, "bad_record", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, bytes.NewReader(tc.stdin), &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1; stdout %s stderr %s", code, stdout.String(), stderr.String())
			}
			got := readJSON(t, stdout.Bytes())
			if got["error"] != tc.code || got["move"] != tc.move {
				t.Errorf("got %v, want error %s at move %v", got, tc.code, tc.move)
			}
			if msg, _ := got["message"].(string); msg == "" {
				t.Errorf("no message in %v", got)
			}
			if strings.Count(strings.TrimSpace(stdout.String()), "\n") != 0 {
				t.Errorf("stdout is not one line: %q", stdout.String())
			}
		})
	}
}

func TestReplayUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"no file", []string{"replay"}, 2},
		{"two files", []string{"replay", "a", "b"}, 2},
		{"missing file", []string{"replay", filepath.Join(t.TempDir(), "none.json")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, strings.NewReader(""), &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if stdout.Len() != 0 || stderr.Len() == 0 {
				t.Errorf("stdout %q, stderr %q: want the complaint on stderr only", stdout.String(), stderr.String())
			}
		})
	}
}
