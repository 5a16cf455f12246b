package webui

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LogEntry is a warning or error a daemon logged.
type LogEntry struct {
	Time    time.Time
	Level   slog.Level
	Message string
	Attrs   string
}

// RecentErrors keeps the last warnings and errors logged through the
// handlers it wraps, for a daemon's page. Safe for concurrent use.
type RecentErrors struct {
	mu   sync.Mutex
	ring []LogEntry
	next int
	full bool
}

// NewRecentErrors keeps the last n entries.
func NewRecentErrors(n int) *RecentErrors { return &RecentErrors{ring: make([]LogEntry, n)} }

// Wrap returns a handler that passes every record to h and keeps those
// at Warn and above.
func (e *RecentErrors) Wrap(h slog.Handler) slog.Handler { return &errHandler{h: h, e: e} }

// Entries returns the kept entries, newest first.
func (e *RecentErrors) Entries() []LogEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.next
	if e.full {
		n = len(e.ring)
	}
	out := make([]LogEntry, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, e.ring[(e.next-1-i+len(e.ring))%len(e.ring)])
	}
	return out
}

func (e *RecentErrors) add(le LogEntry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ring[e.next] = le
	e.next = (e.next + 1) % len(e.ring)
	if e.next == 0 {
		e.full = true
	}
}

type errHandler struct {
	h     slog.Handler
	e     *RecentErrors
	attrs string
}

func (h *errHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.h.Enabled(ctx, l)
}

func (h *errHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		attrs := h.attrs
		r.Attrs(func(a slog.Attr) bool {
			if len(attrs) < 1024 {
				attrs += " " + a.String()
			}
			return true
		})
		h.e.add(LogEntry{Time: r.Time, Level: r.Level, Message: r.Message, Attrs: attrs})
	}
	if !h.h.Enabled(ctx, r.Level) {
		return nil
	}
	return h.h.Handle(ctx, r)
}

func (h *errHandler) WithAttrs(as []slog.Attr) slog.Handler {
	s := h.attrs
	for _, a := range as {
		s += " " + a.String()
	}
	return &errHandler{h: h.h.WithAttrs(as), e: h.e, attrs: s}
}

func (h *errHandler) WithGroup(name string) slog.Handler {
	return &errHandler{h: h.h.WithGroup(name), e: h.e, attrs: h.attrs}
}
