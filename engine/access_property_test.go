package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/engine/accesstest"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// engineClient is accesstest.Client over the engine in process.
type engineClient struct{ eng *engine.Engine }

func (c engineClient) Audit(ctx context.Context, p graph.Principal, r engine.AuditRequest) ([]graph.AuditEvent, error) {
	evs, _, err := c.eng.ListAudit(ctx, p, r)
	return evs, err
}

func (c engineClient) Ingest(ctx context.Context, p graph.Principal, r engine.IngestRequest) (engine.IngestResult, error) {
	return c.eng.Ingest(ctx, p, r)
}

func (c engineClient) Get(ctx context.Context, p graph.Principal, id string) (graph.Memory, error) {
	v, err := c.eng.Get(ctx, p, id)
	return v.Memory, err
}

func (c engineClient) List(ctx context.Context, p graph.Principal, r engine.ListRequest) ([]graph.Memory, error) {
	l, err := c.eng.List(ctx, p, r)
	return l.Memories, err
}

func (c engineClient) Search(ctx context.Context, p graph.Principal, r engine.SearchRequest) (engine.SearchResponse, error) {
	return c.eng.Search(ctx, p, r)
}

func (c engineClient) ReadContext(ctx context.Context, p graph.Principal, r engine.ContextRequest) (engine.ContextResponse, error) {
	return c.eng.ReadContext(ctx, p, r)
}

func (c engineClient) Verify(ctx context.Context, p graph.Principal, r engine.VerifyRequest) (engine.VerifyResponse, error) {
	return c.eng.VerifyCitations(ctx, p, r)
}

func (c engineClient) GateRequests(ctx context.Context, p graph.Principal) ([]graph.GateRequest, error) {
	reqs, _, err := c.eng.ListGateRequests(ctx, p, "", graph.Page{Limit: 100})
	return reqs, err
}

func (c engineClient) GateRequest(ctx context.Context, p graph.Principal, id string) (graph.GateRequest, error) {
	v, err := c.eng.GetGateRequest(ctx, p, id)
	return v.GateRequest, err
}

func (c engineClient) Approve(ctx context.Context, p graph.Principal, id string) (engine.Decision, error) {
	return c.eng.ApproveGateRequest(ctx, p, id, "")
}

// TestAccessProperty is issue 11's property test in process: random
// principals, writes and reads on every read path, 0 records returned that
// the principal may not read. MNEMO_PROPERTY_READS sets the number of reads
// (default 3000).
func TestAccessProperty(t *testing.T) {
	f := newIngFixture(t, ingOpts{vectors: true, policy: accesstest.Roles})
	w := accesstest.NewWorld(t, accesstest.Config{Seed: 11})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	st := w.Run(ctx, engineClient{f.eng})
	t.Logf("%s backend, in process: %s", graphtest.Backend(), st)
}
