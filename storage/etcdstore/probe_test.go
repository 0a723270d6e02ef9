package etcdstore

import (
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestSlowMemberLeavesTheProbeUnsure: a member that takes a connection but does not answer in time
// (alive on a loaded machine) says nothing of a leader, so the probe is not sure the cluster is out
// of reach and a call marked out is made rather than refused; members that refuse connections
// (stopped) leave it sure. Before, a probe that no member answered in time refused every call for
// a timeout: TestDoublePressesOnEtcd refused healthy presses as "unreachable" on a busy machine.
func TestSlowMemberLeavesTheProbeUnsure(t *testing.T) {
	// Before this test's clients, as Start does before the other tests'.
	etcdtest.QuietGRPC()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // takes connections, never speaks gRPC
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped := closed.Addr().String()
	closed.Close() // a stopped member: its port refuses connections
	for _, tc := range []struct {
		name      string
		endpoints []string
		sure      bool
	}{
		{"stopped", []string{"http://" + stopped}, true},
		{"slow", []string{"http://" + silent.Addr().String()}, false},
		{"stopped and slow", []string{"http://" + stopped, "http://" + silent.Addr().String()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli, err := clientv3.New(clientv3.Config{Endpoints: tc.endpoints, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			s := &Store{cli: cli, timeout: 2 * time.Second}
			leader, sure, err := s.askLeader(t.Context(), 250*time.Millisecond)
			if leader || sure != tc.sure {
				t.Errorf("leader %v, sure %v (%v); want no leader, sure %v", leader, sure, err, tc.sure)
			}
			s.outUntil.Store(time.Now().Add(time.Minute).UnixNano())
			if err := s.leaderless(t.Context()); (err == nil) == tc.sure {
				t.Errorf("a call while marked out: %v", err)
			}
		})
	}
}
