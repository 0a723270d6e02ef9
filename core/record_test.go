package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// TestExamples replays every worked example under testdata/ and compares the summary with the
// expected output, key by key (extra keys in our output are allowed by docs/records.md).
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../testdata/example-*.expected.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, exp := range files {
		in := strings.TrimSuffix(exp, ".expected.json") + ".json"
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := core.Replay(data)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			got := toMap(t, out)
			want := readMap(t, exp)
			for k, v := range want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s: got %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readMap(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
