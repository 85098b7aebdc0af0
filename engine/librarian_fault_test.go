package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

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
		faults *graphtest.Faulty
	}
	setup := func(t *testing.T) (fixture, string) {
		t.Helper()
		f, fs := newFaultyFixture(t, ingOpts{})
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
		f.faults.Arm(graphtest.Fault{Method: "CreateMemories", Do: func(context.Context) error { return rejectNow(f, id) }})
		_, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.ErrorIs(t, err, graph.ErrConflict)
		assert.Empty(t, withContent(t, f), "no memory written, not even one archived afterwards")
		assert.Empty(t, f.audits(t, engine.AuditGateApprove))
		assert.Empty(t, f.audits(t, engine.AuditLibrarianApprove))
		g := request(t, f, id)
		assert.Equal(t, graph.GateRejected, g.Status, "the other decision stands")
		assert.Empty(t, g.MemoryID)
		assert.Equal(t, 1, f.faults.Calls("CreateMemories"), "a settled request is not re-planned")
	})
	t.Run("the write fails", func(t *testing.T) {
		f, id := setup(t)
		f.faults.Arm(graphtest.Fault{Method: "CreateMemories", From: true, Err: ingError("disk full")})
		_, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.ErrorContains(t, err, "disk full")
		assert.Empty(t, withContent(t, f))
		assert.Empty(t, f.audits(t, engine.AuditLibrarianApprove))
		assert.Equal(t, graph.GatePending, request(t, f, id).Status, "still pending: the librarian can try again")

		f.faults.Clear()
		d, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), id, "")
		require.NoError(t, err)
		mems := withContent(t, f)
		require.Len(t, mems, 1)
		assert.Equal(t, mems[0].ID, d.Result.ID)
		g := request(t, f, id)
		assert.Equal(t, graph.GateApproved, g.Status)
		assert.Equal(t, mems[0].ID, g.MemoryID)
		assert.Len(t, f.audits(t, engine.AuditLibrarianApprove), 1)
		assert.Equal(t, 0, f.faults.Calls("DecideGateRequest"), "settled in the write's transaction, not by a second call")
	})
	t.Run("an approval that reinforces", func(t *testing.T) {
		f, first := setup(t)
		again, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Content: content})
		require.NoError(t, err)
		require.Equal(t, engine.StatusPending, again.Status)
		d, err := f.eng.ApproveGateRequest(ctx, f.as("librarian"), first, "")
		require.NoError(t, err)
		before := f.memory(t, d.Result.ID).AccessCount

		f.faults.Arm(graphtest.Fault{Method: "DecideGateRequest", Do: func(context.Context) error { return rejectNow(f, again.RequestID) }})
		_, err = f.eng.ApproveGateRequest(ctx, f.as("librarian"), again.RequestID, "")
		require.ErrorIs(t, err, graph.ErrConflict)
		assert.Equal(t, before, f.memory(t, d.Result.ID).AccessCount, "not reinforced")
		assert.Equal(t, 0, f.faults.Calls("Touch"))
		assert.Equal(t, graph.GateRejected, request(t, f, again.RequestID).Status)
		assert.Len(t, f.audits(t, engine.AuditLibrarianApprove), 1, "only the first approval")
	})
}
