package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// faultStore wraps a real store (compare Vault's ErrorInjector): before
// each write it calls hook with the method's name, which may act on the
// inner store (a concurrent librarian) or return an error that fails the
// call before it reaches the store. It counts the calls.
type faultStore struct {
	graphtest.Store // every capability, so the engine finds them through the wrapper
	mu              sync.Mutex
	hook            func(method string) error
	calls           map[string]int
}

func (f *faultStore) before(method string) error {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	hook := f.hook
	f.mu.Unlock()
	if hook == nil {
		return nil
	}
	return hook(method)
}

func (f *faultStore) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *faultStore) CreateMemories(ctx context.Context, in []graph.MemoryInput) ([]graph.Created, error) {
	if err := f.before("CreateMemories"); err != nil {
		return nil, err
	}
	return f.Store.CreateMemories(ctx, in)
}

func (f *faultStore) AddVersion(ctx context.Context, s graph.Scope, id string, in graph.VersionInput) (graph.Version, error) {
	if err := f.before("AddVersion"); err != nil {
		return graph.Version{}, err
	}
	return f.Store.AddVersion(ctx, s, id, in)
}

func (f *faultStore) Touch(ctx context.Context, s graph.Scope, ids []string, at time.Time) error {
	if err := f.before("Touch"); err != nil {
		return err
	}
	return f.Store.Touch(ctx, s, ids, at)
}

func (f *faultStore) PublishedBaselines(ctx context.Context, flt graph.Filter) ([]graph.Baseline, error) {
	if err := f.before("PublishedBaselines"); err != nil {
		return nil, err
	}
	return f.Store.PublishedBaselines(ctx, flt)
}

// wrap makes f wrap s, with every capability s has.
func (f *faultStore) wrap(s graph.Store) graph.Store {
	f.Store = s.(graphtest.Store)
	return f
}

func (f *faultStore) DecideGateRequest(ctx context.Context, s graph.Scope, id string, d graph.GateDecision, a graph.AuditEvent) (graph.GateRequest, error) {
	if err := f.before("DecideGateRequest"); err != nil {
		return graph.GateRequest{}, err
	}
	return f.Store.DecideGateRequest(ctx, s, id, d, a)
}

// TestApproveAtomic: approving a queued write writes the memory and
// settles the request together. When the step that settles fails (another
// librarian decided first) or the write fails, no partial state is left:
// no memory (in any status), no approval audit, and the request keeps the
// state it had.
func TestApproveAtomic(t *testing.T) {
	const content = "We decided to run the billing jobs on Kubernetes."
	ctx := ingCtx(t)
	type fixture struct {
		*ingFixture
		faults *faultStore
	}
	setup := func(t *testing.T) (fixture, string) {
		t.Helper()
		fs := &faultStore{}
		f := newIngFixture(t, ingOpts{wrap: fs.wrap})
		r, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Content: content})
		require.NoError(t, err)
		require.Equal(t, engine.StatusPending, r.Status)
		return fixture{f, fs}, r.RequestID
	}
	rejectNow := func(f fixture, id string) error {
		_, err := f.store.DecideGateRequest(ctx, f.scope, id, graph.GateDecision{Status: graph.GateRejected, DecidedBy: "other-librarian"},
			graph.AuditEvent{Scope: f.scope, Action: engine.AuditLibrarianReject, ActorID: "other-librarian"})
		return err
	}
	request := func(t *testing.T, f fixture, id string) graph.GateRequest {
		t.Helper()
		g, err := f.store.GetGateRequest(ctx, graph.Filter{Scope: f.scope, Reader: graph.System}, id)
		require.NoError(t, err)
		return g
	}
	withContent := func(t *testing.T, f fixture) []graph.Memory {
		t.Helper()
		var out []graph.Memory
		for _, m := range f.memories(t) {
			v, err := f.store.GetVersion(ctx, graph.Filter{Scope: f.scope, Reader: graph.System, Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}}, m.CurrentVersionID)
			require.NoError(t, err)
			if v.Content == content {
				out = append(out, m)
			}
		}
		return out
	}

	t.Run("another librarian decides between read and write", func(t *testing.T) {
		f, id := setup(t)
		f.faults.hook = func(method string) error {
			if method == "CreateMemories" {
				f.faults.hook = nil
				return rejectNow(f, id)
			}
			return nil
		}
		_, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.ErrorIs(t, err, graph.ErrConflict)
		assert.Empty(t, withContent(t, f), "no memory written, not even one archived afterwards")
		assert.Empty(t, f.audits(t, engine.AuditGateApprove))
		assert.Empty(t, f.audits(t, engine.AuditLibrarianApprove))
		g := request(t, f, id)
		assert.Equal(t, graph.GateRejected, g.Status, "the other decision stands")
		assert.Empty(t, g.MemoryID)
		assert.Equal(t, 1, f.faults.count("CreateMemories"), "a settled request is not re-planned")
	})
	t.Run("the write fails", func(t *testing.T) {
		f, id := setup(t)
		f.faults.hook = func(method string) error {
			if method == "CreateMemories" {
				return ingError("disk full")
			}
			return nil
		}
		_, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.ErrorContains(t, err, "disk full")
		assert.Empty(t, withContent(t, f))
		assert.Empty(t, f.audits(t, engine.AuditLibrarianApprove))
		assert.Equal(t, graph.GatePending, request(t, f, id).Status, "still pending: the librarian can try again")

		f.faults.hook = nil
		d, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.NoError(t, err)
		mems := withContent(t, f)
		require.Len(t, mems, 1)
		assert.Equal(t, mems[0].ID, d.Result.ID)
		g := request(t, f, id)
		assert.Equal(t, graph.GateApproved, g.Status)
		assert.Equal(t, mems[0].ID, g.MemoryID)
		assert.Len(t, f.audits(t, engine.AuditLibrarianApprove), 1)
		assert.Equal(t, 0, f.faults.count("DecideGateRequest"), "settled in the write's transaction, not by a second call")
	})
	t.Run("an approval that reinforces", func(t *testing.T) {
		f, first := setup(t)
		again, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Content: content})
		require.NoError(t, err)
		require.Equal(t, engine.StatusPending, again.Status)
		d, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), first, "")
		require.NoError(t, err)
		before := f.memory(t, d.Result.ID).AccessCount

		f.faults.hook = func(method string) error {
			if method == "DecideGateRequest" {
				f.faults.hook = nil
				return rejectNow(f, again.RequestID)
			}
			return nil
		}
		_, err = f.eng.ApproveGateRequest(ctx, f.as("librarian"), again.RequestID, "")
		require.ErrorIs(t, err, graph.ErrConflict)
		assert.Equal(t, before, f.memory(t, d.Result.ID).AccessCount, "not reinforced")
		assert.Equal(t, 0, f.faults.count("Touch"))
		assert.Equal(t, graph.GateRejected, request(t, f, again.RequestID).Status)
		assert.Len(t, f.audits(t, engine.AuditLibrarianApprove), 1, "only the first approval")
	})
}
