package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// benchEnv is an env on the real database (bbolt, every move an fsynced commit).
func benchEnv(b *testing.B) *env {
	b.Helper()
	st, err := storage.Open(filepath.Join(b.TempDir(), "bench.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	e := newEnv(b, func(c *Config) { c.KV = st; c.MoveRate, c.MoveBurst = 1e6, 1e6 })
	e.svc.Close()
	e.svc = tabletest.New(table.Config{Store: st, KV: st, Robots: randomRobots, Seed: 11,
		Outboxes: map[string]table.Outbox{benchPlatform: e.web.Tee(nullOutbox{})}})
	e.web.Attach(e.svc)
	b.Cleanup(e.svc.Close)
	return e
}

// seen is what a reader goroutine tells: a socket's newest view.
type seen struct {
	socket int
	view   SeatView
}

// BenchmarkMoveToFourSockets measures a move sent from one socket until all four sockets of the
// table have the state it made (the move stored in the database first): the p50 and p99 of that
// time are reported with the mean.
func BenchmarkMoveToFourSockets(b *testing.B) {
	e := benchEnv(b)
	id, ps, _ := e.fourTable(1)
	views := make(chan seen, 64)
	var conns []*websocket.Conn
	latest := make([]SeatView, 4)
	for i, p := range ps {
		k := e.open(e.session(p, id))
		conns = append(conns, k.c)
		latest[i] = k.view
		go func() {
			for {
				_, data, err := k.c.Read(context.Background())
				if err != nil {
					return
				}
				var m outbound
				if json.Unmarshal(data, &m) == nil && m.View != nil {
					views <- seen{i, *m.View}
				}
			}
		}()
	}
	send := func(c *websocket.Conn, verb, arg string, seq uint64, n int) {
		data, _ := json.Marshal(map[string]any{"t": "move", "verb": verb, "arg": arg, "seq": seq, "id": fmt.Sprint("b", n)})
		if err := c.Write(context.Background(), websocket.MessageText, data); err != nil {
			b.Fatal(err)
		}
	}
	var took []time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		mover := -1
		for i, v := range latest {
			if v.Game != nil && v.Status == api.StatusPlaying && v.Game.ToMove == v.You {
				mover = i
			}
		}
		v := latest[max(mover, 0)]
		verb, arg := "rematch", "same"
		switch {
		case mover < 0 && v.Status != api.StatusOver:
			b.Fatalf("nobody to move at seq %d (%s)", v.Seq, v.Status)
		case mover < 0:
		case len(v.Trumps) > 0:
			verb, arg = "trump", v.Trumps[n%4].Arg
		default:
			verb = "play"
			for _, c := range v.Hand {
				if c.Legal {
					arg = c.Card
				}
			}
		}
		start := time.Now()
		send(conns[max(mover, 0)], verb, arg, v.Seq, n)
		fresh := 0
		for fresh < 4 {
			s := <-views
			if s.view.Seq > latest[s.socket].Seq {
				if latest[s.socket].Seq <= v.Seq {
					fresh++
				}
				latest[s.socket] = s.view
			}
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	for _, c := range conns {
		c.CloseNow()
	}
}

// BenchmarkIdleSockets opens 1,000 sockets (250 tables of four) that then sit idle, and reports
// what they cost the bot's process in memory: the heap and the goroutine stacks in use with them
// open, less what it held before. The pages' side of the sockets runs in a child process (this
// test binary again, see TestMain), so that only the server's side is counted.
func BenchmarkIdleSockets(b *testing.B) {
	const tables, sockets = 250, 1000
	// The pages' process says nothing after its hello: no heartbeat ends their sockets meanwhile.
	e := newEnv(b, func(c *Config) { c.HTTP.MaxConns, c.Heartbeat = 2*sockets, time.Hour })
	var sessions []string
	for i := range tables {
		id, ps, _ := e.fourTable(i)
		for _, p := range ps {
			sessions = append(sessions, e.session(p, id))
		}
	}
	for b.Loop() {
		before, beforeStack := memInUse()
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), dialEnv+"="+"ws"+strings.TrimPrefix(e.url, "http")+"/ws")
		stdin, err := child.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := child.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintln(stdin, strings.Join(sessions, "\n")+"\n")
		ready := bufio.NewScanner(out)
		if !ready.Scan() || ready.Text() != "ready" {
			b.Fatalf("the pages' process: %q", ready.Text())
		}
		for e.web.Sockets() != sockets {
			time.Sleep(time.Millisecond)
		}
		after, afterStack := memInUse()
		b.ReportMetric(float64(after-before)/(1<<20), "MB/1000-sockets")
		b.ReportMetric(float64(afterStack-beforeStack)/(1<<20), "stack-MB")
		b.ReportMetric(float64(after-before)/sockets/1024, "KiB/socket")
		stdin.Close() // the pages go
		if err := child.Wait(); err != nil {
			b.Fatal(err)
		}
		for e.web.Sockets() != 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// dialEnv makes this test binary the pages' side of BenchmarkIdleSockets: it opens a socket for
// each session read from stdin, says "ready" once every one has its first view, and leaves when
// stdin closes.
const dialEnv = "KONTERMATT_BENCH_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		os.Exit(dialAll(addr))
	}
	os.Exit(m.Run())
}

func dialAll(addr string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<10)
	var conns []*websocket.Conn
	for in.Scan() {
		if in.Text() == "" {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		// Each page from an address of its own, as the reverse proxy on the bot's machine says.
		n := len(conns)
		from := http.Header{"X-Forwarded-For": {fmt.Sprintf("10.1.%d.%d", n>>8, n&255)}}
		c, _, err := websocket.Dial(ctx, addr, &websocket.DialOptions{HTTPHeader: from})
		if err == nil {
			c.SetReadLimit(1 << 20)
			hello, _ := json.Marshal(map[string]any{"t": "hello", "session": in.Text()})
			if err = c.Write(ctx, websocket.MessageText, hello); err == nil {
				for err == nil {
					var data []byte
					_, data, err = c.Read(ctx)
					if strings.Contains(string(data), `"t":"view"`) {
						break
					}
				}
			}
		}
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "dialing:", err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.CloseNow()
	}
	return 0
}

// memInUse is the heap and the goroutine stacks in use, after a collection, and the stacks alone.
func memInUse() (total, stacks int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse), int64(m.StackInuse)
}

// BenchmarkBytesPerMove plays whole matches of one person (from their socket) and three computer
// players, and reports what the socket carried from the server: bytes per change of the table
// (every move, of any seat, and every timer's), per move of the person, and per view.
func BenchmarkBytesPerMove(b *testing.B) {
	e := newEnv(b, fastPlayer)
	var bytes, changes, own, views int
	n := 0
	for b.Loop() {
		n++
		id, p, _ := e.soloTable(n)
		k, err := e.dial(e.session(p, id), "")
		if err != nil {
			b.Fatal(err)
		}
		first := uint64(0)
		moved := uint64(0)
		for k.view.Status != api.StatusOver {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, data, err := k.c.Read(ctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			bytes += len(data)
			var m outbound
			if json.Unmarshal(data, &m) != nil || m.View == nil {
				continue
			}
			views++
			k.view = *m.View
			if first == 0 {
				first = m.View.Seq
			}
			if v := k.view; v.Status == api.StatusPlaying && v.Game.ToMove == v.You && v.Seq > moved {
				verb, arg := v.FirstMove()
				k.move(verb, arg, v.Seq, fmt.Sprint("b", v.Seq))
				moved = v.Seq
				own++
			}
		}
		changes += int(k.view.Seq - first)
		k.c.CloseNow()
	}
	b.ReportMetric(float64(bytes)/float64(changes), "B/change")
	b.ReportMetric(float64(bytes)/float64(own), "B/own-move")
	b.ReportMetric(float64(bytes)/float64(views), "B/view")
	b.ReportMetric(float64(views)/float64(n), "views/match")
}
