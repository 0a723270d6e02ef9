package table

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
)

// Where the tables' randomness comes from. The service reads table IDs and each table's secret
// from Config.Random: crypto/rand, unless a test or a tool seeds the service (Config.Seed), when it
// is ChaCha8 from that seed, so the same seed opens the same tables and deals the same games. A
// table's secret (secretSize bytes) is kept in its state, and everything random about the table —
// each deal, each match's first dealer, a shuffle of the seats, its computer players' and its
// hints' seeds — is derived from that secret alone: a stored table deals exactly as it would have,
// and nothing anyone sees (its ID, which is read separately; its deal numbers) says anything about
// its secret.

// secretSize is the length of a table's secret: a ChaCha8 seed.
const secretSize = 32

// The uses of a table's secret; each derives seeds of its own.
const (
	useDeal    = "deal"    // deal number k (counted over the table's life)
	useFirst   = "first"   // the first dealer of match number k
	useShuffle = "shuffle" // the seats shuffled by the command of sequence number k
	useRobot   = "robot"   // the computer player in seat k
	useHint    = "hint"    // the table's hints and reviews
)

// randomSource is the service's source of randomness: cfg.Random, or what the seed makes.
func randomSource(cfg Config) io.Reader {
	switch {
	case cfg.Random != nil:
		return cfg.Random
	case cfg.Seed != 0:
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[:], cfg.Seed)
		return mrand.NewChaCha8(seed)
	}
	return rand.Reader
}

// source is where table IDs and tables' secrets are drawn from (randomSource), with a lock of
// its own: commands of any table draw from it, and a seeded service must draw from one stream.
type source struct {
	mu sync.Mutex
	r  io.Reader
}

// read fills b from the source. crypto/rand never fails; an injected source that does is a
// broken program.
func (src *source) read(b []byte) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if _, err := io.ReadFull(src.r, b); err != nil {
		panic(fmt.Sprintf("table: Config.Random failed: %v", err))
	}
}

// uint64 draws a number.
func (src *source) uint64() uint64 {
	var b [8]byte
	src.read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// secret draws a table's secret.
func (src *source) secret() []byte {
	b := make([]byte, secretSize)
	src.read(b)
	return b
}

// derive is the seed of one use of a table's secret: SHA-256 of the secret, the use and its
// number.
func derive(secret []byte, use string, n uint64) [32]byte {
	h := sha256.New()
	h.Write(secret)
	h.Write([]byte(use))
	h.Write(binary.BigEndian.AppendUint64(nil, n))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// rng gives the table's random stream for one use.
func (st *state) rng(use string, n uint64) *mrand.Rand {
	return mrand.New(mrand.NewChaCha8(derive(st.Secret, use, n)))
}

// seed64 gives a 64-bit seed for one use (computer players and hints take one).
func (st *state) seed64(use string, n uint64) uint64 {
	d := derive(st.Secret, use, n)
	return binary.LittleEndian.Uint64(d[:8])
}
