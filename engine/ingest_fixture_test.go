package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// ingFixture is an engine on a real SQLite store in a temporary directory,
// with the shipped default policy.
type ingFixture struct {
	eng    *engine.Engine
	policy *policy.Holder
	store  graph.Store
	index  vector.Index
	emb    *hashEmbedder
	scope  graph.Scope
}

// principals of the fixture's tenant, one per default role.
func (f *ingFixture) as(roles ...string) graph.Principal {
	return graph.Principal{ID: strings.Join(roles, "+") + "-1", Roles: roles, Scope: f.scope}
}

type ingOpts struct {
	policy  func(*policy.Policy) // edits the default policy before use
	vectors bool
	index   func(vector.Index) vector.Index // wraps the index, e.g. to inject faults
	store   graph.Store                     // another client of this store (graphtest.OpenSecond) instead of a new one
	wrap    func(graph.Store) graph.Store   // wraps the store the engine uses, e.g. to inject faults
	now     func() time.Time
	outbox  engine.OutboxOptions
	// vectorsOff wires the engine as a deployment without vectors.
	vectorsOff bool
}

func newIngFixture(t testing.TB, o ingOpts) *ingFixture {
	t.Helper()
	st := o.store
	if st == nil {
		st = graphtest.Open(t)
	}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	// The default relevance is calibrated on bge-small's cosines, not on
	// the bag-of-words test embedder's: every vector hit is a candidate,
	// and the access tests check the vector branch on all of them.
	embedtest.Uncalibrated(&pol.Retrieval)
	if o.policy != nil {
		o.policy(pol)
	}
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	f := &ingFixture{store: st, policy: holder, scope: graph.Scope{TenantID: "t1"}}
	opts := engine.Options{Store: st, Policy: holder, Now: o.now, Outbox: o.outbox, VectorsOff: o.vectorsOff}
	if o.wrap != nil {
		opts.Store = o.wrap(st)
	}
	if o.vectors {
		idx, err := local.Open(t.TempDir(), local.Options{Dimensions: 16})
		require.NoError(t, err)
		t.Cleanup(func() { _ = idx.Close() })
		f.index, f.emb = idx, &hashEmbedder{dim: 16}
		if o.index != nil {
			f.index = o.index(idx)
		}
		opts.Index, opts.Embedder = f.index, f.emb
	}
	f.eng, err = engine.New(opts)
	require.NoError(t, err)
	return f
}

// memories returns every memory of the tenant, whatever its status.
func (f *ingFixture) memories(t testing.TB) []graph.Memory {
	t.Helper()
	var out []graph.Memory
	flt := graph.Filter{Scope: f.scope, Reader: graph.System, Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}}
	for p := (graph.Page{Limit: 1000}); ; {
		l, err := f.store.ListMemories(context.Background(), flt, p)
		require.NoError(t, err)
		out = append(out, l.Memories...)
		if l.NextCursor == "" {
			return out
		}
		p.Cursor = l.NextCursor
	}
}

// audits returns the tenant's audit events with action.
func (f *ingFixture) audits(t testing.TB, action string) []graph.AuditEvent {
	t.Helper()
	var out []graph.AuditEvent
	p := graph.Page{Limit: 1000}
	for {
		evs, next, err := f.store.ListAudit(context.Background(), graph.Filter{Scope: f.scope, Reader: graph.System}, graph.AuditQuery{Action: action}, p)
		require.NoError(t, err)
		out = append(out, evs...)
		if next == "" {
			return out
		}
		p.Cursor = next
	}
}

func (f *ingFixture) memory(t testing.TB, id string) graph.Memory {
	t.Helper()
	m, err := f.store.GetMemory(context.Background(), graph.Filter{Scope: f.scope, Reader: graph.System, Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}}, id)
	require.NoError(t, err)
	return m
}

// hashEmbedder is a small deterministic embedder for engine tests: a
// bag of hashed words. Only the write path's plumbing is under test, not
// the quality of the vectors. fail makes the next calls fail.
type hashEmbedder struct {
	dim   int
	calls atomic.Int64
	texts atomic.Int64
	fail  atomic.Bool
}

func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.calls.Add(1)
	h.texts.Add(int64(len(texts)))
	if h.fail.Load() {
		return nil, errEmbed
	}
	return embedtest.Bag{Dim: h.dim}.Embed(ctx, texts)
}

func (h *hashEmbedder) Dimensions() int { return h.dim }
func (h *hashEmbedder) ModelID() string { return "test/hash-bag" }

type ingError string

func (e ingError) Error() string { return string(e) }

const errEmbed = ingError("embedder down")

// flakyIndex fails Upsert while down is set, and any Upsert of the
// poisoned point id.
type flakyIndex struct {
	vector.Index
	down   atomic.Bool
	poison atomic.Value // string: a point id whose upsert always fails
}

func (f *flakyIndex) Upsert(ctx context.Context, pts []vector.Point) error {
	if f.down.Load() {
		return ingError("index down")
	}
	if id, _ := f.poison.Load().(string); id != "" {
		for _, p := range pts {
			if p.ID == id {
				return ingError("point " + id + " refused")
			}
		}
	}
	return f.Index.Upsert(ctx, pts)
}

// clock is a settable time source for engine tests.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func ingCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
