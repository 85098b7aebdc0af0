package engine

import (
	"context"
	"errors"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Observer is told what the engine did, for operators' metrics. The
// server's metrics package implements it, so the engine imports no metrics
// library. Every label it is given comes from a small fixed set (never an
// id, a tenant or a query), and its methods must be cheap and safe for
// concurrent use: they run on the request path.
type Observer interface {
	// Ingested reports n items of one ingest call (mode single, batch or
	// approval) that ended in outcome: an IngestStatus, or invalid,
	// forbidden, conflict, timeout or error when the call failed.
	Ingested(mode, outcome string, n int)
	// Searched reports one search: mode graph, vector, keyword, hybrid,
	// default (the request named none and the call failed before the
	// policy's was taken) or invalid; outcome hits, empty, abstained,
	// invalid, forbidden, timeout or error.
	Searched(mode, outcome string)
	// Embedded reports one embedder call of texts texts that took took and
	// failed when err is set.
	Embedded(texts int, took time.Duration, err error)
}

// Ingest modes an Observer is told.
const (
	IngestSingle   = "single"
	IngestBatched  = "batch"
	IngestApproval = "approval"
)

func (e *Engine) observeIngest(o ingestOpts, n int, out []IngestResult, err error) {
	if e.obs == nil {
		return
	}
	mode := IngestSingle
	switch {
	case o.approvedBy != "":
		mode = IngestApproval
	case o.batch:
		mode = IngestBatched
	}
	if err != nil {
		e.obs.Ingested(mode, failure(err), n)
		return
	}
	counts := map[IngestStatus]int{}
	for _, r := range out {
		counts[r.Status]++
	}
	for status, k := range counts {
		e.obs.Ingested(mode, string(status), k)
	}
}

func (e *Engine) observeSearch(asked string, resp SearchResponse, err error) {
	if e.obs == nil {
		return
	}
	mode := resp.Mode
	if mode == "" {
		mode = asked
	}
	switch mode {
	case "graph", "vector", "keyword", "hybrid":
	case "":
		mode = "default"
	default:
		mode = "invalid"
	}
	outcome := "hits"
	switch {
	case err != nil:
		outcome = failure(err)
	case resp.Abstained:
		outcome = "abstained"
	case len(resp.Results) == 0:
		outcome = "empty"
	}
	e.obs.Searched(mode, outcome)
}

// failure names a failed call's outcome for an Observer.
func failure(err error) string {
	switch {
	case errors.Is(err, graph.ErrInvalid):
		return "invalid"
	case errors.Is(err, graph.ErrForbidden):
		return "forbidden"
	case errors.Is(err, graph.ErrConflict):
		return "conflict"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	}
	return "error"
}

// observedEmbedder reports each call of the embedder it wraps.
type observedEmbedder struct {
	Embedder
	obs Observer
}

func (o observedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	vecs, err := o.Embedder.Embed(ctx, texts)
	o.obs.Embedded(len(texts), time.Since(start), err)
	return vecs, err
}
