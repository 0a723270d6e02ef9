package web

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// The page gets the stripe board as the chats draw it (the service's board picture, a PNG as a
// data: URL, with its alt text): before the first view, then once when a game ends, not with
// every move.
func TestBoardPictureOncePerGame(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1)
	k := e.open(e.session(p, id))
	var boards [][]byte
	count := func() {
		boards = boards[:0]
		for _, m := range k.got {
			if m.T != "board" {
				continue
			}
			data, ok := strings.CutPrefix(m.PNG, "data:image/png;base64,")
			raw, err := base64.StdEncoding.DecodeString(data)
			if !ok || err != nil || m.Text == "" {
				t.Fatalf("the board is no PNG data URL with an alt text: %.60q, %q", m.PNG, m.Text)
			}
			if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
				t.Fatalf("the board's PNG: %v", err)
			}
			boards = append(boards, raw)
		}
	}
	count()
	if len(boards) != 1 {
		t.Fatalf("before the first view: %d boards (%s)", len(boards), k.kinds())
	}
	// Read the socket (a read that times out would end it) and play the person's turns from it.
	for len(k.view.Board.Games) == 0 {
		if v := k.view; v.Game != nil && v.Game.ToMove == v.You && v.Status == api.StatusPlaying {
			verb, arg := v.FirstMove()
			k.move(verb, arg, v.Seq, fmt.Sprint("m", v.Seq))
		}
		k.next("view")
	}
	count()
	views := 0
	for _, m := range k.got {
		if m.T == "view" {
			views++
		}
	}
	if len(boards) != 2 || views < 6 || bytes.Equal(boards[0], boards[1]) {
		t.Fatalf("a game: %d views, %d boards (the second the same as the first: %v)", views, len(boards),
			len(boards) == 2 && bytes.Equal(boards[0], boards[1]))
	}
}
