package etcdtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Wire is one client's connection to the cluster's members: a TCP proxy per member that Cut
// drops at once, as the death of the client's process does from the cluster's view (its
// connections reset, nothing said on them first: its leases run out rather than being given
// up), or as a network that fails between it and the cluster.
type Wire struct {
	mu    sync.Mutex
	lns   []net.Listener
	conns []net.Conn
	cut   bool
	// Endpoints are the proxies' addresses, one for each member's: what the client dials.
	Endpoints []string
}

// Wire starts a Wire to every member; it is cut when the test ends.
func (c *Cluster) Wire(tb testing.TB) *Wire {
	tb.Helper()
	w := &Wire{}
	for _, m := range c.Members {
		target := strings.TrimPrefix(m.ClientURL, "http://")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		w.lns = append(w.lns, ln)
		w.Endpoints = append(w.Endpoints, "http://"+ln.Addr().String())
		go w.forward(ln, target)
	}
	tb.Cleanup(w.Cut)
	return w
}

// forward takes the proxy's connections and joins each to the member, until it is cut.
func (w *Wire) forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		w.mu.Lock()
		if w.cut {
			w.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		w.conns = append(w.conns, c, up)
		w.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// Cut resets every connection and takes no new ones.
func (w *Wire) Cut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cut = true
	for _, ln := range w.lns {
		ln.Close()
	}
	for _, c := range w.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as after kill -9
		}
		c.Close()
	}
}
