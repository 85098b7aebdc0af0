// Package metrics holds mnemo's Prometheus metrics: request latency per
// route, ingest and search counters (as the engine's Observer), embedder
// time, and gauges read from the stores lazily at scrape time (stats.go).
// The server records requests; cmd/mnemo wires one Metrics into the engine
// and the server and mounts Handler. Every label comes from a small fixed
// set: route patterns, never raw paths or ids.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mnemo-dev/mnemo/engine"
)

// Options configures Metrics. Zero fields take their defaults.
type Options struct {
	// Stats reads the store-wide figures (engine.Engine.Stats); nil
	// exports no store gauges.
	Stats func(context.Context) (engine.Stats, error)
	// StatsTTL is how long a read of Stats serves scrapes (default 5s).
	StatsTTL time.Duration
	// StatsWait bounds how long a scrape waits for a read of Stats
	// (default 2ms); past it the scrape serves the last figures read and
	// the read goes on for the next scrape. Reads grow with the store
	// (about 150 ms at 100k memories in SQLite), scrapes must not.
	StatsWait time.Duration
	// StatsTimeout bounds one read of Stats (default 10s).
	StatsTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Metrics is mnemo's metrics on a registry of its own. It implements
// engine.Observer. It is safe for concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.HistogramVec
	ingests    *prometheus.CounterVec
	searches   *prometheus.CounterVec
	embeds     *prometheus.HistogramVec
	embedTexts prometheus.Counter
	handler    http.Handler
}

var _ engine.Observer = (*Metrics)(nil)

// New registers mnemo's metrics, the Go runtime's and the process's.
func New(o Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mnemo_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		ingests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mnemo_ingest_items_total",
			Help: "Ingested items by mode (single, batch, approval) and outcome (approved, superseded, updated, reinforced, pending, rejected, or invalid, forbidden, conflict, timeout, error).",
		}, []string{"mode", "outcome"}),
		searches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mnemo_searches_total",
			Help: "Searches by mode (graph, vector, keyword, hybrid, default, invalid) and outcome (hits, empty, abstained, invalid, forbidden, timeout, error).",
		}, []string{"mode", "outcome"}),
		embeds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mnemo_embed_duration_seconds",
			Help:    "Embedder call latency by outcome (ok, error).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
		embedTexts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mnemo_embed_texts_total",
			Help: "Texts embedded.",
		}),
	}
	m.reg.MustRegister(m.requests, m.ingests, m.searches, m.embeds, m.embedTexts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Stats != nil {
		m.reg.MustRegister(newStatsCollector(o))
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return m.handler
}

// Unmatched is the route label of a request no route matched.
const Unmatched = "unmatched"

// ObserveRequest records one HTTP request: route is its pattern
// ("/v1/memories/:id"), empty when no route matched.
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration) {
	if route == "" {
		route = Unmatched
	}
	m.requests.WithLabelValues(route, methodLabel(method), strconv.Itoa(status)).Observe(took.Seconds())
}

// methodLabel bounds the method label: a client may send any token.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// Ingested implements engine.Observer.
func (m *Metrics) Ingested(mode, outcome string, n int) {
	m.ingests.WithLabelValues(mode, outcome).Add(float64(n))
}

// Searched implements engine.Observer.
func (m *Metrics) Searched(mode, outcome string) {
	m.searches.WithLabelValues(mode, outcome).Inc()
}

// Embedded implements engine.Observer.
func (m *Metrics) Embedded(texts int, took time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.embeds.WithLabelValues(outcome).Observe(took.Seconds())
	m.embedTexts.Add(float64(texts))
}
