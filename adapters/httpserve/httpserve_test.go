package httpserve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// testServer serves h within lim on a loopback port, with the open-files limit as given (0: none
// known); it gives the server and its address.
func testServer(t *testing.T, files int, lim Limits, h http.Handler) (*Server, string) {
	t.Helper()
	old := fdLimit
	fdLimit = func() int { return files }
	s := New("test", h, lim, nil)
	fdLimit = old
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

// eventually waits for cond, at most 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slowHandler tells started of every request it takes, then reads its body to the end.
func slowHandler(started chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintln(w, "ok", Client(r))
			return
		}
		started <- Client(r).String()
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		fmt.Fprintln(w, "read")
	})
}

// slowConn opens a connection from the local address ip and starts a POST whose body never
// comes (headers names extra header lines); the server's first answer line, if any, comes on
// answered.
func slowConn(t *testing.T, addr, ip, headers string) (net.Conn, <-chan string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n%s\r\n{", headers)
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		answered <- strings.TrimSpace(line)
	}()
	return c, answered
}

// held tells whether a slow connection reached the handler (true) or was refused at once.
func held(t *testing.T, started <-chan string, answered <-chan string) (bool, string) {
	t.Helper()
	select {
	case client := <-started:
		return true, client
	case line := <-answered:
		return false, line
	case <-time.After(5 * time.Second):
		t.Fatal("a connection was neither served nor refused")
		return false, ""
	}
}

func get(t *testing.T, addr, ip, xff string) (int, string) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET from %s: %v", ip, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// Ten slow requests from one address: four are served (and wait for their bodies), six are
// answered 429 at once; another address is served as before.
func TestBoundPerAddress(t *testing.T) {
	started := make(chan string, 20)
	s, addr := testServer(t, 0, Limits{MaxConns: 40, MaxConnsPerAddr: 4}, slowHandler(started))
	in, out := 0, 0
	for range 10 {
		_, answered := slowConn(t, addr, "127.0.0.2", "")
		if ok, line := held(t, started, answered); ok {
			in++
		} else if line == "HTTP/1.1 429 Too Many Requests" {
			out++
		} else {
			t.Fatalf("a refusal: %q", line)
		}
	}
	if in != 4 || out != 6 {
		t.Fatalf("of 10 slow connections from one address %d were served and %d refused, want 4 and 6", in, out)
	}
	if code, body := get(t, addr, "127.0.0.3", ""); code != 200 || body != "ok 127.0.0.3/32" {
		t.Fatalf("another address: %d %q", code, body)
	}
	if st := s.Stats(); st.Open < 4 || st.Refused != 6 {
		t.Fatalf("stats %+v", st)
	}
}

// The bound on all connections holds whatever the addresses: the seventh is answered 503.
func TestBoundTotal(t *testing.T) {
	started := make(chan string, 20)
	_, addr := testServer(t, 0, Limits{MaxConns: 6, MaxConnsPerAddr: 6}, slowHandler(started))
	for i := range 6 {
		_, answered := slowConn(t, addr, fmt.Sprintf("127.0.0.%d", 2+i), "")
		if ok, line := held(t, started, answered); !ok {
			t.Fatalf("connection %d refused: %q", i, line)
		}
	}
	_, answered := slowConn(t, addr, "127.0.0.9", "")
	if ok, line := held(t, started, answered); ok || line != "HTTP/1.1 503 Service Unavailable" {
		t.Fatalf("the seventh connection: served %v, %q", ok, line)
	}
}

// Behind a trusted proxy the client is the one X-Forwarded-For names: its requests in flight
// are bounded, other clients of the same proxy are served, and Client says who it is.
func TestProxiedClients(t *testing.T) {
	started := make(chan string, 20)
	s, addr := testServer(t, 0, Limits{MaxConns: 40, MaxConnsPerAddr: 4, Proxies: Loopback}, slowHandler(started))
	in, out := 0, 0
	for range 6 {
		_, answered := slowConn(t, addr, "127.0.0.1", "X-Forwarded-For: 10.9.9.9, 203.0.113.7\r\n")
		switch ok, line := held(t, started, answered); {
		case ok && line == "203.0.113.7/32":
			in++
		case !ok && line == "HTTP/1.1 429 Too Many Requests":
			out++
		default:
			t.Fatalf("served %v: %q", ok, line)
		}
	}
	if in != 4 || out != 2 {
		t.Fatalf("of 6 slow requests from one client through the proxy %d were served and %d refused, want 4 and 2", in, out)
	}
	eventually(t, "the refused requests' connections close", func() bool { return s.Stats().Open == 4 })
	if code, body := get(t, addr, "127.0.0.1", "2001:db8:1:2:3::9"); code != 200 || body != "ok 2001:db8:1:2::/64" {
		t.Fatalf("another client of the proxy: %d %q", code, body)
	}
	// Not from a proxy: X-Forwarded-For proves nothing.
	_, direct := testServer(t, 0, Limits{}, slowHandler(started))
	if code, body := get(t, direct, "127.0.0.5", "203.0.113.7"); code != 200 || body != "ok 127.0.0.5/32" {
		t.Fatalf("an untrusted peer's X-Forwarded-For: %d %q", code, body)
	}
}

func TestForwardedClient(t *testing.T) {
	proxy := func(a netip.Addr) bool { return a.IsLoopback() || netip.MustParsePrefix("10.0.0.0/8").Contains(a) }
	for _, tc := range []struct{ header, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"203.0.113.7, 127.0.0.1", "203.0.113.7"},
		{"1.2.3.4, 203.0.113.7, 10.1.1.1", "203.0.113.7"}, // the client wrote 1.2.3.4 itself
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"::ffff:198.51.100.2", "198.51.100.2"},
		{"203.0.113.7, unknown", ""}, // a hop no proxy wrote
		{"127.0.0.1", ""},
		{"", ""},
	} {
		got, ok := forwardedClient([]string{tc.header}, proxy)
		if s := got.String(); ok != (tc.want != "") || ok && s != tc.want {
			t.Errorf("X-Forwarded-For %q: %v %v, want %q", tc.header, got, ok, tc.want)
		}
	}
	if got, _ := forwardedClient([]string{"1.1.1.1", "203.0.113.8"}, proxy); got.String() != "203.0.113.8" {
		t.Errorf("two header lines: %v", got)
	}
}

// A body dripped slower than ReadTimeout is cut and its connection's place given back; an idle
// keep-alive is closed after IdleTimeout.
func TestTimeoutsGiveConnectionsBack(t *testing.T) {
	started := make(chan string, 20)
	s, addr := testServer(t, 0, Limits{ReadTimeout: 150 * time.Millisecond, IdleTimeout: 150 * time.Millisecond}, slowHandler(started))
	c, answered := slowConn(t, addr, "127.0.0.2", "")
	if ok, _ := held(t, started, answered); !ok {
		t.Fatal("refused")
	}
	eventually(t, "the slow connection is closed", func() bool { return s.Stats().Open == 0 })
	c.Close()
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(idle)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("the idle connection got more bytes")
	}
	eventually(t, "the idle connection's place is given back", func() bool { return s.Stats().Open == 0 })
}

// A handler that answers without reading the body does not make the connection wait for it
// (net/http would read up to 256 KiB of it, as slowly as the client sends).
func TestUnreadBodyIsNotWaitedFor(t *testing.T) {
	s, addr := testServer(t, 0, Limits{ReadTimeout: time.Minute}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	c, answered := slowConn(t, addr, "127.0.0.2", "")
	select {
	case line := <-answered:
		if line != "HTTP/1.1 200 OK" {
			t.Fatalf("the answer: %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer waits for the body")
	}
	c.Close()
	eventually(t, "the connection closes", func() bool { return s.Stats().Open == 0 })
}

// A body over MaxBody is refused by the reader the handler gets.
func TestBodyLimit(t *testing.T) {
	_, addr := testServer(t, 0, Limits{MaxBody: 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		}
	}))
	for _, tc := range []struct {
		body string
		want int
	}{{"0123456789", 200}, {"0123456789x", 413}} {
		resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("a body of %d bytes: %d, want %d", len(tc.body), resp.StatusCode, tc.want)
		}
	}
}

// A hijacked connection (a WebSocket) is counted while it is open, and outlives the server's
// read and write timeouts.
func TestHijackedOutlivesTimeouts(t *testing.T) {
	const timeout = 100 * time.Millisecond
	s, addr := testServer(t, 0, Limits{ReadTimeout: timeout, WriteTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		io.Copy(c, rw) // echo until the client goes
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	r := bufio.NewReader(c)
	if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v", err)
	}
	time.Sleep(4 * timeout) // past both deadlines, had they stayed
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("the hijacked connection after the timeouts: %q %v", line, err)
	}
	if n := s.Stats().Open; n != 1 {
		t.Fatalf("%d connections counted, want the hijacked one", n)
	}
	c.Close()
	eventually(t, "the hijacked connection's place is given back", func() bool { return s.Stats().Open == 0 })
}

// With few open files, each server takes an eighth of them, a quarter of that per address.
func TestLimitsFollowOpenFiles(t *testing.T) {
	for _, tc := range []struct {
		files, conns, perAddr int
	}{{0, 1024, 64}, {120, 15, 3}, {1 << 20, 1024, 64}, {40, 8, 2}, {4096, 512, 64}} {
		old := fdLimit
		fdLimit = func() int { return tc.files }
		l := Limits{MaxConns: 1024, MaxConnsPerAddr: 64}.withDefaults()
		fdLimit = old
		if l.MaxConns != tc.conns || l.MaxConnsPerAddr != tc.perAddr {
			t.Errorf("%d open files: %d connections, %d per address; want %d, %d", tc.files, l.MaxConns, l.MaxConnsPerAddr, tc.conns, tc.perAddr)
		}
	}
}

func TestParseProxies(t *testing.T) {
	got, err := ParseProxies("127.0.0.1, 10.1.2.3/8 ::1 ::ffff:192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1/32", "10.0.0.0/8", "::1/128", "192.0.2.1/32"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := ParseProxies("10.0.0.0/8, proxy.local"); err == nil || !strings.Contains(err.Error(), "proxy.local") {
		t.Fatalf("a name: %v", err)
	}
}
