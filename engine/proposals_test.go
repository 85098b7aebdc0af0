package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// loopFixture is a memory of repository t1/o1/r1 at version 2 (v1 -> v2
// through an accepted proposal), with an open proposal pinned to v2
// (fresh) and one pinned to v1 (stale).
type loopFixture struct {
	*ingFixture
	repo         graph.Scope
	mem, v1, v2  string
	fresh, stale string
	librarian    graph.Principal
}

func newLoopFixture(t *testing.T) *loopFixture {
	t.Helper()
	f := &loopFixture{ingFixture: newIngFixture(t, ingOpts{}), repo: graph.Scope{TenantID: "t1", OrgID: "o1", RepoID: "r1"}}
	f.librarian = f.in("librarian")
	c, err := graphtest.CreateMemory(ingCtx(t), f.store, graph.MemoryInput{
		Memory:  graph.Memory{Scope: f.repo, Type: "note", Title: "pool", Visibility: graph.VisibilityProject, UserID: "someone"},
		Version: graph.VersionInput{Content: "postgres pool size is 10"},
	})
	require.NoError(t, err)
	f.mem, f.v1 = c.Memory.ID, c.Version.ID
	ctx := ingCtx(t)
	first, err := f.eng.Propose(ctx, f.librarian, engine.ProposalRequest{MemoryID: f.mem, VersionNumber: 1, Content: "postgres pool size is 20"})
	require.NoError(t, err)
	stale, err := f.eng.Propose(ctx, f.librarian, engine.ProposalRequest{MemoryID: f.mem, VersionID: f.v1, Content: "postgres pool size is 30"})
	require.NoError(t, err)
	acc, err := f.eng.AcceptProposal(ctx, f.librarian, first.ID, "")
	require.NoError(t, err)
	f.v2, f.stale = acc.Version.ID, stale.ID
	fresh, err := f.eng.Propose(ctx, f.librarian, engine.ProposalRequest{MemoryID: f.mem, VersionID: f.v2, Content: "postgres pool size is 40"})
	require.NoError(t, err)
	f.fresh = fresh.ID
	return f
}

// in is a principal of repository r1 with roles.
func (f *loopFixture) in(roles ...string) graph.Principal {
	p := f.as(roles...)
	p.Scope = f.repo
	return p
}

// TestProposalPermissions: which roles of the default policy may take
// each step of the curation loop. An execution agent only proposes (and
// rebases); writers propose too; librarians and admins decide and promote.
func TestProposalPermissions(t *testing.T) {
	allowed := map[string]map[string]bool{
		"reader":    {},
		"agent":     {"propose": true, "rebase": true},
		"writer":    {"propose": true, "rebase": true},
		"librarian": {"propose": true, "rebase": true, "accept": true, "reject": true, "promote": true},
		"admin":     {"propose": true, "rebase": true, "accept": true, "reject": true, "promote": true},
	}
	for _, role := range []string{"reader", "agent", "writer", "librarian", "admin"} {
		for _, op := range []string{"propose", "rebase", "accept", "reject", "promote"} {
			t.Run(role+"/"+op, func(t *testing.T) {
				f := newLoopFixture(t)
				p, ctx := f.in(role), ingCtx(t)
				var err error
				switch op {
				case "propose":
					_, err = f.eng.Propose(ctx, p, engine.ProposalRequest{MemoryID: f.mem, VersionID: f.v2, Content: "x"})
				case "rebase":
					_, err = f.eng.RebaseProposal(ctx, p, f.stale, engine.RebaseRequest{})
				case "accept":
					_, err = f.eng.AcceptProposal(ctx, p, f.fresh, "")
				case "reject":
					_, err = f.eng.RejectProposal(ctx, p, f.fresh, "no")
				case "promote":
					_, err = f.eng.PromoteBaseline(ctx, p, engine.PromoteRequest{})
				}
				if allowed[role][op] {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, graph.ErrForbidden)
				}
			})
		}
	}
}

// TestProposalRequests: bad requests are typed errors naming the field;
// the pin must be a version of the memory; a principal that cannot read
// the memory gets ErrNotFound for it and its proposals.
func TestProposalRequests(t *testing.T) {
	f := newLoopFixture(t)
	ctx, agent := ingCtx(t), f.in("agent")
	other, err := graphtest.CreateMemory(ctx, f.store, graph.MemoryInput{
		Memory:  graph.Memory{Scope: f.repo, Type: "note", Title: "other", Visibility: graph.VisibilityProject},
		Version: graph.VersionInput{Content: "another memory"},
	})
	require.NoError(t, err)
	private, err := graphtest.CreateMemory(ctx, f.store, graph.MemoryInput{
		Memory:  graph.Memory{Scope: f.repo, Type: "note", Title: "mine", Visibility: graph.VisibilityUser, UserID: "bob"},
		Version: graph.VersionInput{Content: "bob's private note"},
	})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		r     engine.ProposalRequest
		field string
	}{
		{"no content", engine.ProposalRequest{MemoryID: f.mem, VersionID: f.v2}, "content"},
		{"no memory", engine.ProposalRequest{VersionID: f.v2, Content: "x"}, "memory_id"},
		{"no pin", engine.ProposalRequest{MemoryID: f.mem, Content: "x"}, "version_id"},
		{"two pins", engine.ProposalRequest{MemoryID: f.mem, VersionID: f.v2, VersionNumber: 2, Content: "x"}, "version_id"},
		{"a version of another memory", engine.ProposalRequest{MemoryID: f.mem, VersionID: other.Version.ID, Content: "x"}, "version_id"},
		{"no such number", engine.ProposalRequest{MemoryID: f.mem, VersionNumber: 9, Content: "x"}, "version_number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.eng.Propose(ctx, agent, c.r)
			var fe *graph.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, c.field, fe.Field)
		})
	}
	pr, err := f.eng.Propose(ctx, agent, engine.ProposalRequest{MemoryID: f.mem, VersionNumber: 1, Content: "x"})
	require.NoError(t, err)
	assert.Equal(t, f.v1, pr.TargetVersionID, "version_number resolves to the version id")

	_, err = f.eng.Propose(ctx, agent, engine.ProposalRequest{MemoryID: private.Memory.ID, VersionID: private.Version.ID, Content: "x"})
	assert.ErrorIs(t, err, graph.ErrNotFound, "another user's private memory")
	outsider := f.as("librarian")
	outsider.Scope = graph.Scope{TenantID: "t1", OrgID: "o1", RepoID: "r2"}
	_, err = f.eng.GetProposal(ctx, outsider, f.fresh)
	assert.ErrorIs(t, err, graph.ErrNotFound, "another repository")
	_, err = f.eng.AcceptProposal(ctx, outsider, f.fresh, "")
	assert.ErrorIs(t, err, graph.ErrNotFound, "another repository")
	_, err = f.eng.RejectProposal(ctx, f.librarian, f.fresh, " ")
	var fe *graph.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "reason", fe.Field)
	_, err = f.eng.PromoteBaseline(ctx, f.as("librarian"), engine.PromoteRequest{})
	require.ErrorAs(t, err, &fe, "a tenant-wide key names no repository")
	assert.Equal(t, "scope.repo_id", fe.Field)
}
