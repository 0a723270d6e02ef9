package telegram

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The webhook's server is built with the bot's HTTP limits (adapters/httpserve): a post whose
// body drips in slower than the read timeout is cut, so slow clients cannot hold its
// connections; Telegram's own posts are answered meanwhile.
func TestWebhookCutsSlowPosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		ln := newMemListener()
		f.hookClient = ln.client()
		t.Cleanup(f.stopWebhook)
		e := startEnv(t, f, store, logs, withWebhook(ln))
		client, server := net.Pipe()
		ln.conns <- server
		fmt.Fprintf(client, "POST /tg/hook HTTP/1.1\r\nHost: bot.example.org\r\n%s: %s\r\nContent-Length: 1000\r\n\r\n{", secretHeader, hookSecret)
		f.command(alice, group, 0, "/new")
		settle(5 * time.Second)
		if p := f.pending(); len(p) > 0 {
			t.Errorf("Telegram's updates %v not acknowledged beside a slow post", p)
		}
		time.Sleep(webhookLimits.ReadTimeout)
		client.SetReadDeadline(time.Now().Add(time.Second))
		line, err := bufio.NewReader(client).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 4") {
			t.Errorf("a post that drips past the read timeout: %q %v", line, err)
		}
		client.Close()
		e.close()
		f.hookClient.CloseIdleConnections()
	})
}
