package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/server/metrics"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// stats is a Stats source that counts its reads and, while gate is set,
// blocks each read until gate closes (or the read's context ends).
type stats struct {
	reads atomic.Int64
	gate  atomic.Pointer[chan struct{}]
	fail  atomic.Bool
	at    time.Time
}

func (s *stats) read(ctx context.Context) (engine.Stats, error) {
	s.reads.Add(1)
	if g := s.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-ctx.Done():
			return engine.Stats{}, ctx.Err()
		}
	}
	if s.fail.Load() {
		return engine.Stats{}, errors.New("store down")
	}
	return engine.Stats{
		Outbox:  graph.OutboxStatus{Pending: 3, Dead: 1, Oldest: s.at.Add(-90 * time.Second)},
		Counts:  graph.Counts{Memories: map[graph.Status]int{graph.StatusActive: 7}, GatePending: 2},
		Counted: true, VectorPoints: 7, VectorsCounted: true,
		Held: graph.IndexHeld{Memories: 1200, Units: 1900, Tenants: 3, Limit: 5000, Dropped: 4}, HeldCounted: true,
	}, nil
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	return rec.Body.String()
}

// TestStatsLazy: store gauges are read at scrape time, once per TTL; a
// scrape waits for a slow read no longer than StatsWait and then answers
// with what it has (nothing before the first read, the last figures
// after); the slow read completes for a later scrape; a failed read keeps
// the last figures and is counted.
func TestStatsLazy(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	src := &stats{at: clk.now()}
	m := metrics.New(metrics.Options{Stats: src.read, StatsTTL: 5 * time.Second, StatsWait: 20 * time.Millisecond,
		StatsTimeout: time.Minute, Now: clk.now})

	// A read that hangs: the scrape answers without store gauges.
	gate := make(chan struct{})
	src.gate.Store(&gate)
	out := scrape(t, m)
	assert.NotContains(t, out, "mnemo_memories")
	assert.Contains(t, out, `mnemo_stats_read_failures_total{reason="timeout"} 1`)
	// A second scrape while the read is in flight starts no other read.
	_ = scrape(t, m)
	assert.Equal(t, int64(1), src.reads.Load())

	// The read completes: the next scrape reports its figures.
	close(gate)
	require.Eventually(t, func() bool { return strings.Contains(scrape(t, m), `mnemo_memories{status="active"} 7`) },
		5*time.Second, 10*time.Millisecond)
	out = scrape(t, m)
	for _, want := range []string{
		"mnemo_gate_pending_requests 2", "mnemo_outbox_pending_items 3", "mnemo_outbox_dead_letters 1",
		"mnemo_outbox_lag_seconds 90", "mnemo_vector_points 7", `mnemo_memories{status="retracted"} 0`,
		"mnemo_index_held_memories 1200", "mnemo_index_held_units 1900", "mnemo_index_held_tenants 3", "mnemo_index_memory_limit 5000",
		"mnemo_index_dropped_tenants_total 4",
	} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, int64(1), src.reads.Load(), "scrapes within the TTL reuse one read")

	// Past the TTL a scrape reads again; the lag grows with the clock.
	clk.add(6 * time.Second)
	out = scrape(t, m)
	assert.Equal(t, int64(2), src.reads.Load())
	assert.Contains(t, out, "mnemo_outbox_lag_seconds 96")

	// A failed read is counted and the last figures stay, with their age.
	src.fail.Store(true)
	clk.add(6 * time.Second)
	out = scrape(t, m)
	assert.Contains(t, out, `mnemo_stats_read_failures_total{reason="error"} 1`)
	assert.Contains(t, out, `mnemo_memories{status="active"} 7`)
	assert.Contains(t, out, "mnemo_stats_age_seconds 6")
}

// TestRequestLabels: the method label is bounded and an unmatched route
// has its own label.
func TestRequestLabels(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.ObserveRequest("", "BREW", 404, time.Millisecond)
	m.ObserveRequest("/v1/memories/:id", "GET", 200, time.Millisecond)
	out := scrape(t, m)
	assert.Contains(t, out, `mnemo_http_request_duration_seconds_count{method="other",route="unmatched",status="404"} 1`)
	assert.Contains(t, out, `mnemo_http_request_duration_seconds_count{method="GET",route="/v1/memories/:id",status="200"} 1`)
	assert.NotContains(t, out, "BREW")
	assert.NotContains(t, out, "mnemo_memories", "no store gauges without a Stats source")
}
