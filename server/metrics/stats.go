package metrics

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// statsCollector exports the store-wide gauges (gate queue, outbox, index
// sizes). They need store reads, so it reads them lazily at scrape time,
// keeps a read for StatsTTL, and bounds a scrape's wait to StatsWait: a read
// slower than that goes on (up to StatsTimeout) while the scrape answers
// with the last figures read, so a scrape stays cheap whatever the store
// does. mnemo_stats_age_seconds says how old the figures are.
type statsCollector struct {
	read                 func(context.Context) (engine.Stats, error)
	ttl, wait, timeout   time.Duration
	now                  func() time.Time
	memories, gate, pend *prometheus.Desc
	due, dead, lag       *prometheus.Desc
	points, age          *prometheus.Desc
	held, heldUnits      *prometheus.Desc
	heldTenants          *prometheus.Desc
	heldLimit, dropped   *prometheus.Desc
	failures             *prometheus.CounterVec

	mu      sync.Mutex
	st      engine.Stats
	at      time.Time     // when st was read; zero: never
	reading chan struct{} // closed when the read in flight ends; nil: none
}

func newStatsCollector(o Options) *statsCollector {
	if o.Now == nil {
		o.Now = time.Now
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &statsCollector{
		read:     o.Stats,
		ttl:      cmp.Or(o.StatsTTL, 5*time.Second),
		wait:     cmp.Or(o.StatsWait, 2*time.Millisecond),
		timeout:  cmp.Or(o.StatsTimeout, 10*time.Second),
		now:      o.Now,
		memories: d("mnemo_memories", "Memories across tenants by status.", "status"),
		gate:     d("mnemo_gate_pending_requests", "Gate requests awaiting a librarian (the gate queue depth)."),
		pend:     d("mnemo_outbox_pending_items", "Live vector-outbox items (not yet delivered, not dead)."),
		due:      d("mnemo_outbox_due_items", "Live vector-outbox items due now."),
		dead:     d("mnemo_outbox_dead_letters", "Vector-outbox dead letters (`mnemo outbox retry` requeues them)."),
		lag:      d("mnemo_outbox_lag_seconds", "Age of the oldest live vector-outbox item; 0 when none."),
		points:   d("mnemo_vector_points", "Points in the vector index across tenants."),
		age:      d("mnemo_stats_age_seconds", "Age of the store figures this scrape reports."),
		held:     d("mnemo_index_held_memories", "Memories this process's in-process keyword and mention indexes hold (Neo4j store)."),
		heldUnits: d("mnemo_index_held_units", "What the held memories count toward mnemo_index_memory_limit: a tenant counts as its memories, "+
			"or as its distinct terms (postings) over 64 when that is more (Neo4j store)."),
		heldTenants: d("mnemo_index_held_tenants", "Tenants whose indexes this process holds (Neo4j store)."),
		heldLimit:   d("mnemo_index_memory_limit", "The bound on mnemo_index_held_units (--neo4j-index-memories; 0: none)."),
		dropped:     d("mnemo_index_dropped_tenants_total", "Tenants dropped from this process's indexes to keep within the bound; each is read again on its next search."),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mnemo_stats_read_failures_total",
			Help: "Store-figure reads that failed (error) or that a scrape stopped waiting for (timeout).",
		}, []string{"reason"}),
	}
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.memories, c.gate, c.pend, c.due, c.dead, c.lag, c.points, c.age,
		c.held, c.heldUnits, c.heldTenants, c.heldLimit, c.dropped} {
		ch <- d
	}
	c.failures.Describe(ch)
}

// Collect implements prometheus.Collector. Before the first read succeeds
// it exports no store gauges, only the failures.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st, at := c.current()
	defer c.failures.Collect(ch)
	if at.IsZero() {
		return
	}
	now := c.now()
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	g(c.age, now.Sub(at).Seconds())
	g(c.pend, float64(st.Outbox.Pending))
	g(c.due, float64(st.Outbox.Due))
	g(c.dead, float64(st.Outbox.Dead))
	lag := 0.0
	if !st.Outbox.Oldest.IsZero() {
		lag = max(0, now.Sub(st.Outbox.Oldest).Seconds())
	}
	g(c.lag, lag)
	if st.Counted {
		g(c.gate, float64(st.Counts.GatePending))
		for _, s := range []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted} {
			g(c.memories, float64(st.Counts.Memories[s]), string(s))
		}
	}
	if st.VectorsCounted {
		g(c.points, float64(st.VectorPoints))
	}
	if st.HeldCounted {
		g(c.held, float64(st.Held.Memories))
		g(c.heldUnits, float64(st.Held.Units))
		g(c.heldTenants, float64(st.Held.Tenants))
		g(c.heldLimit, float64(st.Held.Limit))
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(st.Held.Dropped))
	}
}

// current returns the figures to report and when they were read: the
// cached ones while fresh, else those of a new read if it ends within
// c.wait, else the last ones read (zero time: none yet).
func (c *statsCollector) current() (engine.Stats, time.Time) {
	c.mu.Lock()
	if !c.at.IsZero() && c.now().Sub(c.at) < c.ttl {
		defer c.mu.Unlock()
		return c.st, c.at
	}
	if c.reading == nil {
		c.reading = make(chan struct{})
		go c.refresh(c.reading)
	}
	done := c.reading
	c.mu.Unlock()
	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.failures.WithLabelValues("timeout").Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st, c.at
}

// refresh reads the figures once, within c.timeout, and closes done. It is
// the one read in flight; a scrape that stopped waiting for it leaves it
// to finish for the next scrape.
func (c *statsCollector) refresh(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.read(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failures.WithLabelValues("error").Inc()
	} else {
		c.st, c.at = st, c.now()
	}
	c.reading = nil
	close(done)
}
