package main

import (
	"bytes"
	"maps"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// leagueEntries reads every league entry of a database.
func leagueEntries(t *testing.T, st *storage.Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	out := map[string]string{}
	for _, b := range league.Buckets {
		if err := st.KVEach(ctx, b, func(k string, v []byte) error { out[b+" "+k] = string(v); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestStatsRebuild: the league a bot kept match by match is what stats rebuild makes from the
// records; a damaged league is made right again, and the line says which happened.
func TestStatsRebuild(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "k.db")
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := tabletest.New(table.Config{Store: st, KV: st, Seed: 3})
	for i := range 3 {
		tb, err := tabletest.Open(svc, i)
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; ; steps++ { // to the end of the first match
			if who, _, _ := svc.Turn(tb.ID); who == "" {
				break
			}
			if _, err := tabletest.Step(svc, tb); err != nil {
				t.Fatal(err)
			}
		}
	}
	svc.Close()
	live := leagueEntries(t, st)
	if len(live) < 3+4*3 { // a league per place, a rating per person, the month
		t.Fatalf("the bot kept %d league entries", len(live))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"stats", "-db", db, "rebuild"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	same := regexp.MustCompile(`^rebuilt the league from 3 kept matches in \d+ms: 3 places, 12 people rated; every number was already the same\n$`)
	if !same.MatchString(stdout.String()) {
		t.Errorf("stdout %q", stdout.String())
	}

	// Damage two entries and lose one: rebuild says so and puts them right.
	st, err = storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Put(ctx, league.BucketRatings, "b0-0", []byte(`{"mu":99,"sigma":1}`))
	_ = st.Put(ctx, league.BucketPlaces, "bench:1", []byte(`{}`))
	_ = st.Delete(ctx, league.BucketPlaces, "bench:2")
	_ = st.Close()
	stdout.Reset()
	if code := run([]string{"stats", "-db", db, "rebuild"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := regexp.MustCompile(`; 3 entries differed from the kept ones and are made anew\n$`); !want.MatchString(stdout.String()) {
		t.Errorf("stdout %q", stdout.String())
	}
	st, err = storage.Open(db, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := leagueEntries(t, st); !maps.Equal(got, live) {
		t.Errorf("the rebuilt league differs from what the bot kept")
	}
}

func TestStatsRebuildRefuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"stats", "-db", db, "rebuild"}, 1, "no database at " + db + "\n"},
		{[]string{"stats", "-db", db, "rebuilt"}, 2, "bot stats: unknown \"rebuilt\"; the one stats command is: bot stats rebuild\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, nil, &stdout, &stderr); code != tc.code || stderr.String() != tc.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, stderr.String(), tc.code, tc.stderr)
		}
	}
}
