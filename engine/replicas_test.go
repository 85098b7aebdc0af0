package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestReplicas: two engines on two clients of one store, as two mnemo
// processes behind a load balancer (issue 15 item 4): a policy reload on
// one reaches the other, and a context read on one verifies on the other.
// (Racing first writes of one key on two engines: TestIngestConcurrentFirstWrites;
// racing outbox drains: storetest OutboxClaim.)
func TestReplicas(t *testing.T) {
	a := newAccessFixture(t)
	b := newIngFixture(t, ingOpts{vectors: true, policy: accessRoles, store: graphtest.OpenSecond(t, a.store)})
	operator := who("op", "", t1, "operator")

	// The replicas' shared policy file, edited by each case to add a role.
	var (
		mu  sync.Mutex
		doc = string(config.DefaultPolicy())
	)
	load := func() (*policy.Policy, error) {
		mu.Lock()
		defer mu.Unlock()
		p, err := policy.Parse("policy.yaml", []byte(doc))
		if err == nil {
			accessRoles(p)
		}
		return p, err
	}
	// reload adds role to the file and reloads a, which marks the store.
	reload := func(t *testing.T, role string) {
		mu.Lock()
		doc = strings.Replace(doc, "\nroles:\n", "\nroles:\n  "+role+": [read, audit_read]\n", 1)
		mu.Unlock()
		_, err := a.eng.ReloadPolicy(ingCtx(t), operator, load)
		require.NoError(t, err)
	}
	// follow runs b's follower until the case ends.
	follow := func(t *testing.T) {
		ctx, cancel := context.WithCancel(ingCtx(t))
		var wg sync.WaitGroup
		wg.Go(func() { b.eng.FollowPolicy(ctx, 10*time.Millisecond, load) })
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
	// followed checks that b runs a's policy and that role works on b.
	followed := func(t *testing.T, role string) {
		want := a.policy.Current().Digest()
		require.Eventually(t, func() bool { return b.policy.Current().Digest() == want }, 30*time.Second, 10*time.Millisecond,
			"the other replica follows the reload")
		_, err := b.eng.List(ingCtx(t), who("x", "", t1, role), engine.ListRequest{})
		require.NoError(t, err, "the new role works on the other replica")
	}

	// The reload lands before the follower's first look (a replica that
	// started just before it) or while it runs: it is followed either way.
	t.Run("a reload before the other replica's first look reaches it", func(t *testing.T) {
		_, err := b.eng.List(ingCtx(t), who("x", "", t1, "archivist"), engine.ListRequest{})
		require.ErrorIs(t, err, graph.ErrForbidden, "no such role yet")
		reload(t, "archivist")
		follow(t)
		followed(t, "archivist")
	})
	t.Run("a policy reload reaches the other replica", func(t *testing.T) {
		follow(t)
		_, err := b.eng.List(ingCtx(t), who("x", "", t1, "curator"), engine.ListRequest{})
		require.ErrorIs(t, err, graph.ErrForbidden, "no such role yet")
		reload(t, "curator")
		followed(t, "curator")
	})

	t.Run("a context read on one replica verifies on the other", func(t *testing.T) {
		writer := who("w", "u1", t1, "writer")
		res, err := a.eng.Ingest(ingCtx(t), writer, engine.IngestRequest{Type: "note", Content: "The kiln fires at 1200 degrees on Tuesdays."})
		require.NoError(t, err)
		reader := who("r", "u1", t1, "reader")
		c, err := a.eng.ReadContext(ingCtx(t), reader, engine.ContextRequest{ElementID: res.ID})
		require.NoError(t, err)
		require.NotEmpty(t, c.Items)
		require.NotEmpty(t, c.Items[0].Citations)
		v, err := b.eng.VerifyCitations(ingCtx(t), reader, engine.VerifyRequest{ContextID: c.ContextID,
			Citations: c.Items[0].Citations})
		require.NoError(t, err)
		assert.True(t, v.Valid, "%+v", v)
		assert.Equal(t, len(c.Items[0].Citations), v.Checked)
	})

}
