package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bot invite prints the link with the application's ID asked of Discord with the token, the
// scopes and the permissions; the token never shows, and a refused one is said so.
func TestInvite(t *testing.T) {
	const token = "MTAx.invite-test.SECRET-token-value"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/oauth2/applications/@me") || r.Method != "GET" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bot "+token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message": "401: Unauthorized", "code": 0}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id": "900000000000000042", "name": "kontermatt-test"}`))
	}))
	defer srv.Close()
	config := func(tok, guild string) string {
		return writeConfig(t, "discord:\n  token: "+tok+"\n  api_url: "+srv.URL+"\n  guild_id: \""+guild+"\"\n")
	}
	const want = "https://discord.com/oauth2/authorize?client_id=900000000000000042&integration_type=0&permissions=274877942784&scope=bot+applications.commands"
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"with the token", []string{"invite", "-config", config(token, "")}, 0, want + "\n", ""},
		{"a server preselected", []string{"invite", "-config", config(token, "800000000000000001")}, 0,
			"&guild_id=800000000000000001&", ""},
		{"the permissions named", []string{"invite", "-config", config(token, "")}, 0,
			"permissions 274877942784: “View Channel”, “Send Messages”, “Send Messages in Threads”, “Attach Files”", ""},
		{"a refused token", []string{"invite", "-config", config("MTAx.wrong.SECRET-other-value", "")}, 1, "", "the token was refused"},
		{"no token", []string{"invite", "-config", writeConfig(t, "")}, 2, "", "-application ID"},
		{"no token, the ID given", []string{"invite", "-config", writeConfig(t, ""), "-application", "900000000000000042"}, 0, want + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, nil, &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tc.code, tc.out, tc.err)
			}
			if strings.Contains(out.String()+errb.String(), "SECRET") {
				t.Errorf("the token is in the output: %q %q", out.String(), errb.String())
			}
		})
	}
}
