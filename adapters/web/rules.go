package web

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// rulesPage is the game in short as a page of its own: the lines /rules says in the chats, in
// the language asked for, with links to the others. It needs no script, style or session.
var rulesPage = template.Must(template.New("rules").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Lines}}<p>{{.}}</p>
{{end}}<p>{{.Learn}}</p>
<p>{{range $i, $l := .Langs}}{{if $i}} · {{end}}{{if eq $l $.Lang}}<b>{{$l}}</b>{{else}}<a href="?lang={{$l}}" hreflang="{{$l}}">{{$l}}</a>{{end}}{{end}}</p>
</body>
</html>
`))

// serveRules serves GET /rules?lang=xx: without lang (or with one we do not speak), the
// browser's first language we speak, else English.
func (s *Server) serveRules(w http.ResponseWriter, r *http.Request) {
	lang := i18n.Match(r.URL.Query().Get("lang"))
	if lang == "" {
		var asked []string
		for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
			tag, _, _ := strings.Cut(part, ";")
			asked = append(asked, tag)
		}
		lang = i18n.Pick(asked...)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Vary", "Accept-Language")
	_ = rulesPage.Execute(w, map[string]any{
		"Lang": lang, "Title": i18n.T(lang, "rules.title"), "Lines": table.RulesLines(lang),
		"Learn": i18n.T(lang, "rules.learn"), "Langs": i18n.Languages,
	})
}
