// Package storagetest damages database files for the tests of the storage package and of the
// bot's commands, so both check the same kinds of damage.
package storagetest

import (
	"math/rand/v2"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A Damage spoils a closed database file in place.
type Damage struct {
	Name  string
	Apply func(t testing.TB, path string)
}

// Damages are the ways a file gets damaged that the bot must survive with one clear line: both
// meta pages overwritten, a leaf or a branch page in the middle overwritten, and the file cut
// short at several lengths. Each overwrite uses fixed pseudo-random bytes, so a failure replays.
var Damages = []Damage{
	{"garbage over both meta pages", func(t testing.TB, path string) {
		size := pageSize(t, path)
		overwrite(t, path, 0, 2*size)
	}},
	{"garbage over a leaf page in the middle", func(t testing.TB, path string) {
		overwritePage(t, path, "leaf")
	}},
	{"garbage over a branch page", func(t testing.TB, path string) {
		overwritePage(t, path, "branch")
	}},
	{"truncated to half", func(t testing.TB, path string) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		truncate(t, path, fi.Size()/2)
	}},
	{"truncated inside the second meta page", func(t testing.TB, path string) {
		truncate(t, path, int64(pageSize(t, path))+1000)
	}},
	{"truncated inside the first meta page", func(t testing.TB, path string) {
		truncate(t, path, 1000)
	}},
}

// pageSize reads the database's page size; the file must be healthy still.
func pageSize(t testing.TB, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	defer db.Close()
	return db.Info().PageSize
}

// overwritePage overwrites the middle one of the pages in use of the given type ("leaf",
// "branch"). It fails the test if there is none: fill the database with more data.
func overwritePage(t testing.TB, path, typ string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil) // read-write: Tx.Page needs the freelist loaded
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	var ids []int
	err = db.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == typ {
				ids = append(ids, id)
			}
		}
	})
	size := db.Info().PageSize
	db.Close()
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	if len(ids) == 0 {
		t.Fatalf("storagetest: the database has no %s page in use; fill it with more data", typ)
	}
	id := ids[len(ids)/2]
	overwrite(t, path, int64(id*size), size)
}

func overwrite(t testing.TB, path string, off int64, n int) {
	t.Helper()
	junk := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(off), uint64(n)))
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
}

func truncate(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
