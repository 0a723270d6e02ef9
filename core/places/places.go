// Package places keeps each place's own settings: its defaults for new tables and the language
// its tables speak, and the change of them the people at its table are voting on. They are the
// place's, not a person's (core/privacy keeps those): the engine reads them when it opens a table
// and when it tells the rules, the settings verb (core/places/verbs) shows and changes them, and
// forgetting a person takes their votes back. All a Book needs is the KV and the log, not the
// tables.
package places

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"

	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/store"
)

// Bucket is the KV bucket of the places' settings: place key → Settings. (Its name is the one the
// table service gave it, kept in every store.)
const Bucket = "table.place"

// ProposalBucket is the KV bucket of the changes of places' settings being voted on: place key →
// proposal. It is in the store, not in a copy's memory, so that votes given at several copies
// count together; it moves by compare-and-swap where the KV can (store.Swapper).
const ProposalBucket = "table.proposal"

// maxSwaps is how many times a change is tried when the entry keeps moving under it (another
// copy, or another command at the place at once).
const maxSwaps = 20

// Settings are a place's defaults for new tables: option keys and values as new takes them, and
// the language its tables speak.
type Settings struct {
	Options map[string]string `json:"options,omitempty"`
	Lang    string            `json:"lang,omitempty"`
}

// Args are the settings as arguments of new, in the options' order.
func (ps Settings) Args() []string {
	var out []string
	for _, o := range options.All {
		if v, ok := ps.Options[o.Key]; ok {
			out = append(out, o.Key+"="+v)
		}
	}
	return out
}

// proposal is a change to a place's settings some of the people at its table asked for; it is
// made when all of them have.
type proposal struct {
	Change string   `json:"change"`
	Votes  []string `json:"votes,omitempty"` // the player IDs of those who asked for it
}

// Book keeps the places' settings and proposals in the KV; without a KV it keeps none (every
// place has the defaults).
type Book struct {
	kv  store.KV
	log *slog.Logger
}

// New gives the book on kv (nil: none); log nil logs nothing.
func New(kv store.KV, log *slog.Logger) *Book {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Book{kv: kv, log: log}
}

// Get gives a place's settings: none when there are none, or they do not read (which is logged).
func (b *Book) Get(ctx context.Context, place string) Settings {
	var ps Settings
	if b.kv == nil {
		return ps
	}
	data, ok, err := b.kv.Get(ctx, Bucket, place)
	if err != nil {
		b.log.Error("reading a setting", "bucket", Bucket, "err", err)
		return Settings{}
	}
	if ok {
		if err := json.Unmarshal(data, &ps); err != nil {
			b.log.Error("a setting does not decode; using the defaults", "bucket", Bucket, "key", place, "err", err)
			return Settings{}
		}
	}
	return ps
}

// Change changes a place's settings as f says, from those stored now, again if another copy
// (another admin at once) changed them meanwhile, so that neither change is lost; by
// compare-and-swap where the KV can (store.Swapper). It gives the settings as kept.
func (b *Book) Change(ctx context.Context, place string, f func(*Settings)) (Settings, error) {
	if b.kv == nil {
		var ps Settings
		f(&ps)
		return ps, nil
	}
	sw, swaps := b.kv.(store.Swapper)
	for attempt := 1; ; attempt++ {
		raw, found, err := b.kv.Get(ctx, Bucket, place)
		if err != nil {
			return Settings{}, err
		}
		var ps Settings
		if found && json.Unmarshal(raw, &ps) != nil {
			ps = Settings{} // ones that do not read give way, as Get reads them
		}
		if !found {
			raw = nil
		}
		f(&ps)
		next, err := json.Marshal(ps)
		if err != nil {
			return Settings{}, err
		}
		if !swaps {
			return ps, b.kv.Put(ctx, Bucket, place, next)
		}
		if _, err = sw.Swap(ctx, Bucket, place, raw, next); !errors.Is(err, store.ErrConflict) || attempt == maxSwaps {
			return ps, err
		}
	}
}

// Vote counts a vote of voter's for change (the settings as they would be, in one string) at a
// place whose table seats the people seated (voter among them): the change is made when every
// one of them asked for it. It gives the votes for it and how many are needed; with votes ≥ need
// the proposal is gone, and the caller makes the change.
func (b *Book) Vote(ctx context.Context, place, voter string, seated []string, change string) (votes, need int, err error) {
	n := 0
	err = b.changeProposal(ctx, place, func(p *proposal) {
		if p.Change != change {
			*p = proposal{Change: change}
		}
		if !slices.Contains(p.Votes, voter) {
			p.Votes = append(p.Votes, voter)
		}
		n = 0
		for _, v := range p.Votes {
			if slices.Contains(seated, v) {
				n++
			}
		}
		if n >= len(seated) {
			*p = proposal{} // made: the proposal goes
		}
	})
	if err != nil {
		return 0, 0, err
	}
	return n, len(seated), nil
}

// Unvote takes a person's vote at a place back (they are forgotten).
func (b *Book) Unvote(ctx context.Context, place, voter string) error {
	return b.changeProposal(ctx, place, func(p *proposal) {
		p.Votes = slices.DeleteFunc(p.Votes, func(v string) bool { return v == voter })
	})
}

// changeProposal changes the place's proposal as f says (an empty proposal is none), from the
// one stored now, again if another copy changed it meanwhile.
func (b *Book) changeProposal(ctx context.Context, place string, f func(p *proposal)) error {
	if b.kv == nil {
		return nil
	}
	sw, swaps := b.kv.(store.Swapper)
	for attempt := 1; ; attempt++ {
		raw, found, err := b.kv.Get(ctx, ProposalBucket, place)
		if err != nil {
			return err
		}
		var p proposal
		if found && json.Unmarshal(raw, &p) != nil {
			p = proposal{} // one that does not read is started anew
		}
		if !found {
			raw = nil
		}
		f(&p)
		var next []byte
		if p.Change != "" {
			next, _ = json.Marshal(p)
		}
		switch {
		case !swaps && next == nil:
			return b.kv.Delete(ctx, ProposalBucket, place)
		case !swaps:
			return b.kv.Put(ctx, ProposalBucket, place, next)
		}
		if _, err = sw.Swap(ctx, ProposalBucket, place, raw, next); !errors.Is(err, store.ErrConflict) || attempt == maxSwaps {
			return err
		}
	}
}
