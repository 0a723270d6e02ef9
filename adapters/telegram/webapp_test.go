package telegram

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/adapters/internal/chattest"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A published initData and the bot token it was signed with (the Telegram Mini Apps
// documentation's example, docs.telegram-mini-apps.com, "Init Data"; widely used as a test
// vector): signed on 2022-09-10 at 01:00:48 UTC.
const (
	vectorToken    = "5768337691:AAH5YkoiEuPk8-FZa32hStHTqXiLPtAEhx8"
	vectorInitData = "query_id=AAHdF6IQAAAAAN0XohDhrOrc" +
		"&user=%7B%22id%22%3A279058397%2C%22first_name%22%3A%22Vladislav%22%2C%22last_name%22%3A%22Kibenko%22%2C%22username%22%3A%22vdkfrost%22%2C%22language_code%22%3A%22ru%22%2C%22is_premium%22%3Atrue%7D" +
		"&auth_date=1662771648" +
		"&hash=c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2"
	vectorAuth = 1662771648
)

// signInitData signs fields as Telegram does, for the cases the vector has not (a start
// parameter); the vector checks the algorithm itself.
func signInitData(token string, v url.Values) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range v {
			if !yield(k) {
				return
			}
		}
	})
	var lines []string
	for _, k := range keys {
		lines = append(lines, k+"="+v.Get(k))
	}
	sk := hmac.New(sha256.New, []byte("WebAppData"))
	sk.Write([]byte(token))
	m := hmac.New(sha256.New, sk.Sum(nil))
	m.Write([]byte(strings.Join(lines, "\n")))
	v.Set("hash", hex.EncodeToString(m.Sum(nil)))
	return v.Encode()
}

func TestCheckInitData(t *testing.T) {
	signed := time.Unix(vectorAuth, 0)
	p, start, err := CheckInitData(vectorToken, vectorInitData, signed.Add(10*time.Minute), InitDataMaxAge)
	if err != nil || p.ID != "tg:279058397" || p.Name != "Vladislav Kibenko" || p.Locale != "ru" || start != "" {
		t.Fatalf("the published vector: %+v %q %v", p, start, err)
	}
	tampered := strings.Replace(vectorInitData, "Vladislav", "Vladimir", 1)
	cases := []struct {
		name, token, data string
		at                time.Time
		want              error
	}{
		{"tampered", vectorToken, tampered, signed, ErrInitDataSignature},
		{"another bot's token", testToken, vectorInitData, signed, ErrInitDataSignature},
		{"no hash", vectorToken, strings.Split(vectorInitData, "&hash=")[0], signed, ErrInitDataSignature},
		{"an hour and a second old", vectorToken, vectorInitData, signed.Add(time.Hour + time.Second), ErrInitDataExpired},
		{"from the future", vectorToken, vectorInitData, signed.Add(-2 * time.Minute), ErrInitDataExpired},
		{"not a query", vectorToken, "%zz", signed, ErrInitDataMalformed},
		{"a field twice", vectorToken, vectorInitData + "&auth_date=1", signed, ErrInitDataMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := CheckInitData(c.token, c.data, c.at, InitDataMaxAge); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	if _, _, err := CheckInitData(vectorToken, vectorInitData, signed.Add(time.Hour), InitDataMaxAge); err != nil {
		t.Fatalf("exactly an hour old: %v", err)
	}
	now := time.Date(2026, 5, 1, 20, 0, 0, 0, time.UTC)
	data := signInitData(testToken, url.Values{"auth_date": {"1777665600"}, "start_param": {"k3x9"},
		"user": {`{"id":42,"first_name":"Jang","language_code":"lb"}`}, "signature": {"abc"}})
	p, start, err = CheckInitData(testToken, data, now, InitDataMaxAge)
	if err != nil || p.ID != "tg:42" || p.Locale != "lb" || start != "k3x9" {
		t.Fatalf("a direct link's initData: %+v %q %v", p, start, err)
	}
	bot := signInitData(testToken, url.Values{"auth_date": {"1777665600"}, "user": {`{"id":43,"first_name":"B","is_bot":true}`}})
	if _, _, err := CheckInitData(testToken, bot, now, InitDataMaxAge); !errors.Is(err, ErrInitDataMalformed) {
		t.Fatalf("a bot's initData: %v", err)
	}
}

// With the web table on, a private hand carries the Mini App's web_app button, the answer to
// /hand a one-time link for any browser, and the group's table message the Mini App's direct
// link (a web_app button there would be refused) and the watch link for people without a seat.
func TestMiniAppButtons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		w := chattest.Web{HTTPS: true}
		e := startEnv(t, f, store, logs, func(c *Config) { c.Web, c.MiniApp = w, "table" })
		seatAll(t, f, "timer=none", alice)
		settle(10 * time.Second) // the group's messages go one every 3 s (groupBurst)
		id := tableOf(t, f)
		hand, ok := handMessage(f, alice.ID)
		if !ok {
			t.Fatal("no hand message")
		}
		if want := w.AppURL(id); !slices.Equal(hand.Apps, []string{want}) {
			t.Fatalf("the private hand's web_app buttons: %v, want %s", hand.Apps, want)
		}
		live, _, ok := lastWith(f, group, api.VerbHand, "")
		if !ok {
			t.Fatal("no table message in the group")
		}
		if want := "https://t.me/" + botUsername + "/table?startapp=" + id; !slices.Contains(live.urls(), want) {
			t.Fatalf("the group's table message links %v, want %s", live.urls(), want)
		}
		if want := w.WatchLink(id); !slices.Contains(live.urls(), want) {
			t.Fatalf("the group's table message links %v, not the watch link %s", live.urls(), want)
		}
		if len(live.Apps) != 0 {
			t.Fatalf("a web_app button in the group: %v", live.Apps)
		}
		f.command(alice, alice.ID, 0, "/hand")
		settle(3 * time.Second)
		hand, _ = handMessage(f, alice.ID)
		if want := "https://table.example/#link=" + id + "-tg:" + itoa(alice.ID); !slices.Contains(hand.urls(), want) {
			t.Fatalf("the answer to /hand links %v, want %s", hand.urls(), want)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func itoa(n int64) string { return dest(n) }

// The fake refuses what Telegram refuses: a web_app button in a group, and one whose address is
// not https.
func TestFakeRefusesWebAppButtons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		e := startEnv(t, f, store, logs)
		for _, c := range []struct {
			chat int64
			url  string
			want string
		}{
			{group, "https://table.example/", "BUTTON_TYPE_INVALID"},
			{alice.ID, "http://table.example/", "Only HTTPS links are allowed"},
		} {
			kb, _ := markup(nil, webAppButton{c.url, "Play"})
			p := tgbotapi.Params{"text": "x"}
			p.AddNonZero64("chat_id", c.chat)
			p.AddInterface("reply_markup", kb)
			_, err := e.a.bot.MakeRequest("sendMessage", p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("a web_app button to %d (%s): %v", c.chat, c.url, err)
			}
		}
		e.close()
	})
}
