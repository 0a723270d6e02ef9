package discord

import (
	"context"
	"encoding/json"
	"time"
)

// bucketHands: Discord user ID → the user's newest ephemeral hand (sharedHand), so that whichever
// copy tells the next hand can edit it. An ephemeral reply can be edited only through its
// interaction's token ("Interaction tokens are valid for 15 minutes", docs: Interactions,
// Receiving and Responding), which only the copy that handled "My hand" heard; the copy that owns
// the place, which tells the hands, may be another (issue 31). The token lets its holder edit that
// reply and send follow-ups to that user for 15 minutes, nothing more; it is kept no longer than
// the hand is edited (handTTL), never logged, and forgotten with the person (People).
const bucketHands = "discord.hand"

// sharedHand is an ephemeralHand as the KV keeps it.
type sharedHand struct {
	App      string `json:"app"`
	Token    string `json:"token"`
	Table    string `json:"table"`
	Version  uint64 `json:"version"`
	At       int64  `json:"at"`                 // Unix ms: when it was shown
	Answered int64  `json:"answered,omitempty"` // Unix ms: when its HTTP answer was written
}

// storeCallTime bounds the adapter's KV calls for the shared hand: an edit that cannot learn of a
// newer hand in time edits the one this copy knows.
const storeCallTime = 2 * time.Second

// shareHand writes the user's ephemeral hand to the KV for the other copies.
func (a *Adapter) shareHand(userID string, h ephemeralHand) {
	if a.kv == nil {
		return
	}
	sh := sharedHand{App: h.appID, Token: h.token, Table: h.table, Version: h.version, At: h.at.UnixMilli()}
	if !h.answered.IsZero() {
		sh.Answered = h.answered.UnixMilli()
	}
	b, err := json.Marshal(sh)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(a.baseContext(), storeCallTime)
	defer cancel()
	if err := a.kv.Put(ctx, bucketHands, userID, b); err != nil {
		a.log.Warn("could not share an ephemeral hand with the other copies: the copy that tells the next hand may not update it", "err", err)
	}
}

// sharedHandOf reads the user's ephemeral hand another copy (or this one) shared, if it is still
// edited.
func (a *Adapter) sharedHandOf(ctx context.Context, userID string) (ephemeralHand, bool) {
	if a.kv == nil {
		return ephemeralHand{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, storeCallTime)
	defer cancel()
	b, ok, err := a.kv.Get(ctx, bucketHands, userID)
	if err != nil || !ok {
		return ephemeralHand{}, false
	}
	var sh sharedHand
	if json.Unmarshal(b, &sh) != nil {
		return ephemeralHand{}, false
	}
	h := ephemeralHand{appID: sh.App, token: sh.Token, rest: a.tokens.get(), table: sh.Table, version: sh.Version, at: time.UnixMilli(sh.At)}
	if sh.Answered != 0 {
		h.answered = time.UnixMilli(sh.Answered)
	}
	if time.Since(h.at) > a.handTTL() {
		return ephemeralHand{}, false
	}
	return h, true
}
