package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
)

// newLogger logs at level and up, as text lines or JSON objects (log_format). JSON gives
// durations as Go writes them ("1.5s", "5m0s"), as the text lines do, not as nanoseconds.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// holdHandler keeps the log lines written while the bot starts until release, so that the line
// saying what started comes first (the platforms' "connected", the admin door's warnings follow
// it, in their order).
type holdHandler struct {
	inner slog.Handler
	held  *held
}

type held struct {
	mu      sync.Mutex
	holding bool
	lines   []heldLine
}

type heldLine struct {
	h slog.Handler
	r slog.Record
}

func newHold(inner slog.Handler) *holdHandler {
	return &holdHandler{inner: inner, held: &held{holding: true}}
}

func (h *holdHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *holdHandler) Handle(ctx context.Context, r slog.Record) error {
	h.held.mu.Lock()
	defer h.held.mu.Unlock()
	if h.held.holding {
		h.held.lines = append(h.held.lines, heldLine{h.inner, r.Clone()})
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h *holdHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &holdHandler{inner: h.inner.WithAttrs(as), held: h.held}
}

func (h *holdHandler) WithGroup(name string) slog.Handler {
	return &holdHandler{inner: h.inner.WithGroup(name), held: h.held}
}

// release writes the lines held so far, then lets every later one through at once.
func (h *holdHandler) release() {
	h.held.mu.Lock()
	defer h.held.mu.Unlock()
	for _, l := range h.held.lines {
		_ = l.h.Handle(context.Background(), l.r)
	}
	h.held.lines, h.held.holding = nil, false
}
