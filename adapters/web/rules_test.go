package web

import (
	"html"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// GET /rules?lang=xx is the game in short as a page: the same lines as /rules in the chats, in
// the language asked for, else the browser's, else English; a page without script or style.
func TestRulesPage(t *testing.T) {
	e := newEnv(t)
	get := func(path, accept string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		if accept != "" {
			req.Header.Set("Accept-Language", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, html.UnescapeString(string(body))
	}
	for _, tc := range []struct{ path, accept, lang string }{
		{"/rules?lang=lb", "", "lb"}, {"/rules?lang=de", "fr", "de"}, {"/.proxy/rules?lang=fr", "", "fr"},
		{"/rules", "fr-CH, de;q=0.8", "fr"}, {"/rules", "", "en"}, {"/rules?lang=xx", "pt, lb;q=0.5", "lb"},
	} {
		code, h, body := get(tc.path, tc.accept)
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %q", tc.path, code, h.Get("Content-Type"))
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", tc.path, csp)
		}
		if !strings.Contains(body, `<html lang="`+tc.lang+`">`) || !strings.Contains(body, i18n.T(tc.lang, "rules.title")) {
			t.Errorf("%s (Accept-Language %q): not the %s page:\n%s", tc.path, tc.accept, tc.lang, body)
		}
		for _, line := range append(table.RulesLines(tc.lang), i18n.T(tc.lang, "rules.learn")) {
			if !strings.Contains(body, "<p>"+line+"</p>") {
				t.Errorf("%s: the page lacks %q", tc.path, line)
			}
		}
	}
	if resp, err := http.Post(e.url+"/rules", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /rules: %v %v", resp.StatusCode, err)
	}
}
