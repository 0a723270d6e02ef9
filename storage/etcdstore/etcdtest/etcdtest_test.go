package etcdtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartAllWaitsForEveryMember: when one member cannot start, starting a cluster returns only
// once the other starts have ended too. Before, the first error failed the test at once while
// the other members went on starting; the test's cleanup removed their directories under them,
// and a member opening its database there panicked ("failed to open database"), ending the whole
// test binary (seen once in cmd/bot's TestHealthNamesTheStore on CI).
func TestStartAllWaitsForEveryMember(t *testing.T) {
	QuietGRPC()
	root := t.TempDir()
	blocker := filepath.Join(root, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{tb: t, ready: 2 * time.Second}
	// m0 cannot start: its directory would be inside a regular file. m1 can, but without m0 it
	// never has a quorum, so it waits until its ready bound ends.
	broken := &Member{Name: "m0", Dir: filepath.Join(blocker, "m0"), ClientURL: "http://" + freeAddr(t), peerURL: "http://" + freeAddr(t)}
	waiting := &Member{Name: "m1", Dir: filepath.Join(root, "m1"), ClientURL: "http://" + freeAddr(t), peerURL: "http://" + freeAddr(t)}
	c.Members = []*Member{broken, waiting}
	c.initial = broken.Name + "=" + broken.peerURL + "," + waiting.Name + "=" + waiting.peerURL
	t.Cleanup(c.Close)
	began := time.Now()
	err := c.startAll(c.Members)
	if err == nil {
		t.Fatal("a cluster with a member that cannot start started")
	}
	for _, name := range []string{"member m0", "member m1 did not become ready"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not say %q: %v", name, err)
		}
	}
	if took := time.Since(began); took < c.ready {
		t.Errorf("returned after %v, before the waiting member's %v were over", took, c.ready)
	}
}
