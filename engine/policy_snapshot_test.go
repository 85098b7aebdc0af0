package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestPolicySnapshot: a request reads the policy once, when it starts. A
// reload while it runs (here: from inside its first store call) applies to
// the requests that start afterwards, never to part of one.
func TestPolicySnapshot(t *testing.T) {
	f, fs := newFaultyFixture(t, ingOpts{})
	ctx := ingCtx(t)
	_, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Type: "note", Content: "Grafana runs on host mon-1."})
	require.NoError(t, err)

	// The reloaded policy takes read away from writers and shrinks the
	// token budget to almost nothing.
	strict := func() (*policy.Policy, error) {
		pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
		if err != nil {
			return nil, err
		}
		pol.Roles["writer"] = []string{"write"}
		pol.Retrieval.TokenBudget = 1
		return pol, nil
	}
	fs.Arm(graphtest.Fault{Method: "PublishedBaselines", Do: func(context.Context) error { return f.policy.Reload(strict) }})
	reader := f.as("writer") // the memory is the writer's own
	resp, err := f.eng.ReadContext(ctx, reader, engine.ContextRequest{Query: "Which host runs Grafana?"})
	require.NoError(t, err, "the request runs under the policy it started with")
	require.NotEmpty(t, resp.Items, "under the old policy's token budget")
	assert.Equal(t, 1, fs.Calls("PublishedBaselines"), "the reload happened mid-request")

	_, err = f.eng.ReadContext(ctx, reader, engine.ContextRequest{Query: "Which host runs Grafana?"})
	require.ErrorIs(t, err, graph.ErrForbidden, "the next request runs under the new policy")
}
