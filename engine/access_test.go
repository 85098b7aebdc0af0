package engine_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// accessRoles adds the roles the access tests need to the default policy:
// each grants one of the permissions that widen the plain access rule.
func accessRoles(p *policy.Policy) {
	p.Roles["auditor"] = []string{policy.PermRead, policy.PermReadAllUsers}
	p.Roles["deep"] = []string{policy.PermSubscopes}
	p.Roles["delegate"] = []string{policy.PermActAsUser}
}

// accessModes are the search modes every read check runs in.
var accessModes = []string{policy.ModeGraph, policy.ModeKeyword, policy.ModeVector, policy.ModeHybrid}

func newAccessFixture(t *testing.T) *ingFixture {
	t.Helper()
	return newIngFixture(t, ingOpts{vectors: true, policy: accessRoles})
}

// who builds a principal of tenant t1 (org and repo optional).
func who(id, user string, scope graph.Scope, roles ...string) graph.Principal {
	return graph.Principal{ID: id, UserID: user, Roles: roles, Scope: scope}
}

var (
	t1     = graph.Scope{TenantID: "t1"}
	t1o1   = graph.Scope{TenantID: "t1", OrgID: "o1"}
	t1o1r1 = graph.Scope{TenantID: "t1", OrgID: "o1", RepoID: "r1"}
)

// stored reads a memory as the engine's maintenance does, whoever owns it.
func stored(t *testing.T, f *ingFixture, id string) graph.Memory {
	t.Helper()
	m, err := f.store.GetMemory(context.Background(), graph.Filter{Scope: t1, Reader: graph.System,
		Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}}, id)
	require.NoError(t, err)
	return m
}

// searchIDs runs a search in every mode and returns the ids found per mode.
func searchIDs(t *testing.T, f *ingFixture, p graph.Principal, r engine.SearchRequest) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, mode := range accessModes {
		r.Mode = mode
		res, err := f.eng.Search(ingCtx(t), p, r)
		require.NoError(t, err, "mode %s", mode)
		for _, x := range res.Results {
			out[mode] = append(out[mode], x.Memory.ID)
			for _, n := range x.Neighbours {
				out[mode] = append(out[mode], n.ID)
			}
		}
	}
	return out
}

func TestAccessUsersOwnTheirMemories(t *testing.T) {
	f := newAccessFixture(t)
	ctx := ingCtx(t)
	alice := who("alice", "", t1, "writer")
	bob := who("bob", "", t1, "writer")
	agent := who("agent-7", "alice", t1, "writer") // a key acting as alice
	auditor := who("auditor-1", "", t1, "auditor")

	own := map[string]string{}
	for _, p := range []graph.Principal{alice, bob} {
		res, err := f.eng.Ingest(ctx, p, engine.IngestRequest{Type: "note", Content: "note content"})
		require.NoError(t, err)
		require.Equal(t, engine.StatusApproved, res.Status, "%s's copy is a memory of its own, not a reinforcement", p.ID)
		own[p.ID] = res.ID
	}
	bobBefore := stored(t, f, own["bob"]).AccessCount

	t.Run("search finds only the reader's own copy, in every mode", func(t *testing.T) {
		for _, p := range []graph.Principal{alice, bob} {
			for mode, ids := range searchIDs(t, f, p, engine.SearchRequest{Query: "note content"}) {
				other := own["alice"]
				if p.ID == "alice" {
					other = own["bob"]
				}
				assert.NotContains(t, ids, other, "%s, mode %s", p.ID, mode)
				if mode != policy.ModeGraph { // "note content" names no entity
					assert.Contains(t, ids, own[p.ID], "%s, mode %s", p.ID, mode)
				}
			}
		}
	})
	cases := []struct {
		name string
		read func() ([]string, error) // ids returned
	}{
		{"get", func() ([]string, error) {
			v, err := f.eng.Get(ctx, alice, own["bob"])
			return []string{v.Memory.ID}, err
		}},
		{"list", func() ([]string, error) {
			l, err := f.eng.List(ctx, alice, engine.ListRequest{})
			return listIDs(l), err
		}},
		{"list user_id=bob", func() ([]string, error) {
			l, err := f.eng.List(ctx, alice, engine.ListRequest{UserID: "bob"})
			return listIDs(l), err
		}},
		{"search user_id=bob", func() ([]string, error) {
			var ids []string
			for _, v := range searchIDs(t, f, alice, engine.SearchRequest{Query: "note content", UserID: "bob"}) {
				ids = append(ids, v...)
			}
			return ids, nil
		}},
		{"read_context query", func() ([]string, error) {
			c, err := f.eng.ReadContext(ctx, alice, engine.ContextRequest{Query: "note content"})
			return contextIDs(c), err
		}},
		{"read_context element", func() ([]string, error) {
			c, err := f.eng.ReadContext(ctx, alice, engine.ContextRequest{ElementID: own["bob"]})
			return contextIDs(c), err
		}},
		{"verify bob's context", func() ([]string, error) {
			c, err := f.eng.ReadContext(ctx, bob, engine.ContextRequest{ElementID: own["bob"]})
			require.NoError(t, err)
			require.Len(t, c.Items, 1)
			_, err = f.eng.VerifyCitations(ctx, alice, engine.VerifyRequest{ContextID: c.ContextID, Citations: c.Items[0].Citations})
			if err == nil {
				return []string{own["bob"]}, nil
			}
			return nil, err
		}},
	}
	for _, c := range cases {
		t.Run("alice cannot read bob's memory: "+c.name, func(t *testing.T) {
			ids, err := c.read()
			if err != nil {
				require.ErrorIs(t, err, graph.ErrNotFound)
			}
			assert.NotContains(t, ids, own["bob"])
		})
	}
	t.Run("alice's reads leave bob's access count alone", func(t *testing.T) {
		// The verify case above had bob read his own memory once.
		assert.Equal(t, bobBefore+1, stored(t, f, own["bob"]).AccessCount)
	})
	t.Run("a key acting as alice reads alice's memories, not bob's", func(t *testing.T) {
		v, err := f.eng.Get(ctx, agent, own["alice"])
		require.NoError(t, err)
		assert.Equal(t, own["alice"], v.Memory.ID)
		_, err = f.eng.Get(ctx, agent, own["bob"])
		require.ErrorIs(t, err, graph.ErrNotFound)
	})
	t.Run("read_all_users reads both", func(t *testing.T) {
		l, err := f.eng.List(ctx, auditor, engine.ListRequest{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{own["alice"], own["bob"]}, listIDs(l))
	})
	t.Run("project visibility is shared", func(t *testing.T) {
		res, err := f.eng.Ingest(ctx, bob, engine.IngestRequest{Type: "note", Content: "the shared runbook lives in the wiki",
			Visibility: graph.VisibilityProject})
		require.NoError(t, err)
		v, err := f.eng.Get(ctx, alice, res.ID)
		require.NoError(t, err)
		assert.Equal(t, "bob", v.Memory.UserID)
	})
}

func listIDs(l graph.Listing) []string {
	var ids []string
	for _, m := range l.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

func contextIDs(c engine.ContextResponse) []string {
	var ids []string
	for _, it := range c.Items {
		ids = append(ids, it.ElementID)
	}
	return ids
}

func TestAccessWriteAsUser(t *testing.T) {
	f := newAccessFixture(t)
	ctx := ingCtx(t)
	alice := who("alice", "", t1, "writer")
	bob := who("bob", "", t1, "writer")
	delegate := who("sync-bot", "", t1, "writer", "delegate")
	agent := who("agent-7", "alice", t1, "writer")

	bobShared, err := f.eng.Ingest(ctx, bob, engine.IngestRequest{Type: "note", Content: "The deploy window is Tuesday.", Visibility: graph.VisibilityProject})
	require.NoError(t, err)
	bobPrivate, err := f.eng.Ingest(ctx, bob, engine.IngestRequest{Type: "note", Content: "My locker code is in the safe."})
	require.NoError(t, err)

	forbidden := []struct {
		name string
		as   graph.Principal
		reqs []engine.IngestRequest
		msg  string
	}{
		{"write as another user", alice, []engine.IngestRequest{{Type: "note", Content: "uA likes tea.", UserID: "uA"}},
			`principal "alice" may not write as user "uA": needs permission act_as_user`},
		{"a key acting as alice writes as its principal id", agent, []engine.IngestRequest{{Type: "note", Content: "uA likes tea.", UserID: "agent-7"}},
			`principal "agent-7" may not write as user "agent-7"`},
		{"one item of a batch as another user", alice, []engine.IngestRequest{
			{Type: "note", Content: "Alice likes coffee."}, {Type: "note", Content: "uA likes tea.", UserID: "uA"}},
			`may not write as user "uA"`},
		{"supersede another user's memory", alice, []engine.IngestRequest{{Type: "note", Content: "The deploy window is Wednesday.", Supersedes: bobShared.ID}},
			`principal "alice" may not supersede memory ` + bobShared.ID + ` of user "bob": needs permission act_as_user`},
	}
	for _, c := range forbidden {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.memories(t))
			_, err := f.eng.IngestBatch(ctx, c.as, c.reqs)
			require.ErrorIs(t, err, graph.ErrForbidden)
			assert.Contains(t, err.Error(), c.msg)
			assert.Len(t, f.memories(t), before, "nothing is written")
		})
	}
	t.Run("superseding a memory the writer cannot read is superseding nothing", func(t *testing.T) {
		res, err := f.eng.Ingest(ctx, alice, engine.IngestRequest{Type: "note", Content: "The locker code changed.", Supersedes: bobPrivate.ID})
		require.NoError(t, err)
		assert.Equal(t, engine.StatusRejected, res.Status)
		assert.Contains(t, res.Reason, "does not exist in this scope")
		assert.Equal(t, graph.StatusActive, stored(t, f, bobPrivate.ID).Status)
	})

	allowed := []struct {
		name      string
		as        graph.Principal
		req       engine.IngestRequest
		wantUser  string
		wantActor string
	}{
		{"own user by default", alice, engine.IngestRequest{Type: "note", Content: "Alice prefers dark mode."}, "alice", "alice"},
		{"own user named", alice, engine.IngestRequest{Type: "note", Content: "Alice uses vim.", UserID: "alice"}, "alice", "alice"},
		{"the key's user", agent, engine.IngestRequest{Type: "note", Content: "Alice flies on Friday."}, "alice", "agent-7"},
		{"act_as_user writes as uA", delegate, engine.IngestRequest{Type: "note", Content: "uA likes tea.", UserID: "uA"}, "uA", "sync-bot"},
		{"act_as_user supersedes bob's memory", delegate, engine.IngestRequest{Type: "note", Content: "The deploy window is Thursday.",
			UserID: "bob", Visibility: graph.VisibilityProject, Supersedes: bobShared.ID}, "bob", "sync-bot"},
	}
	for _, c := range allowed {
		t.Run(c.name, func(t *testing.T) {
			res, err := f.eng.Ingest(ctx, c.as, c.req)
			require.NoError(t, err)
			require.Contains(t, []engine.IngestStatus{engine.StatusApproved, engine.StatusSuperseded}, res.Status, "%+v", res)
			m := stored(t, f, res.ID)
			assert.Equal(t, c.wantUser, m.UserID)
			v, err := f.store.GetVersion(ctx, graph.Filter{Scope: t1, Reader: graph.System}, m.CurrentVersionID)
			require.NoError(t, err)
			assert.Equal(t, c.wantActor, v.Provenance.ActorID, "provenance names the real writer")
		})
	}
	t.Run("backlog writes as the key's user", func(t *testing.T) {
		files := fstest.MapFS{"guide.md": {Data: []byte("# Guide\n\nHow we deploy.\n")}}
		sum, err := f.eng.IngestBacklog(ctx, who("agent-7", "alice", t1, "writer"), engine.BacklogRequest{Files: files, SourceRepo: "docs"})
		require.NoError(t, err)
		require.Equal(t, 1, sum.Added, "%+v", sum)
		l, err := f.eng.List(ctx, alice, engine.ListRequest{Types: []string{engine.TypeDocument}})
		require.NoError(t, err)
		require.Len(t, l.Memories, 1)
		assert.Equal(t, "alice", l.Memories[0].UserID)
	})
}

func TestAccessScopes(t *testing.T) {
	f := newAccessFixture(t)
	ctx := ingCtx(t)
	orgWriter := who("ow", "", t1o1, "writer")
	tenantWriter := who("tw", "", t1, "writer")
	tenantReader := who("tr", "", t1, "reader")
	deepReader := who("dr", "", t1, "reader", "deep")
	orgReader := who("or", "", t1o1, "reader")
	repoReader := who("rr", "", t1o1r1, "reader")

	orgNote, err := f.eng.Ingest(ctx, orgWriter, engine.IngestRequest{Type: "note", Content: "The orca sighting log is in bucket seven.", Visibility: graph.VisibilityProject})
	require.NoError(t, err)
	tenantNote, err := f.eng.Ingest(ctx, tenantWriter, engine.IngestRequest{Type: "note", Content: "The orca survey ends in May.", Visibility: graph.VisibilityProject})
	require.NoError(t, err)

	reads := []struct {
		name  string
		as    graph.Principal
		id    string
		reads bool
	}{
		{"a tenant-wide key does not read an org's memory", tenantReader, orgNote.ID, false},
		{"with subscopes it does", deepReader, orgNote.ID, true},
		{"an org key reads its org's memory", orgReader, orgNote.ID, true},
		{"an org key reads the tenant's memory", orgReader, tenantNote.ID, true},
		{"a repo key reads its org's memory", repoReader, orgNote.ID, true},
		{"a tenant-wide key reads the tenant's memory", tenantReader, tenantNote.ID, true},
	}
	for _, c := range reads {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.eng.Get(ctx, c.as, c.id)
			l, lerr := f.eng.List(ctx, c.as, engine.ListRequest{})
			require.NoError(t, lerr)
			found := searchIDs(t, f, c.as, engine.SearchRequest{Query: "orca sighting log survey"})
			if !c.reads {
				require.ErrorIs(t, err, graph.ErrNotFound)
				assert.NotContains(t, listIDs(l), c.id)
				for mode, ids := range found {
					assert.NotContains(t, ids, c.id, "mode %s", mode)
				}
				return
			}
			require.NoError(t, err)
			assert.Contains(t, listIDs(l), c.id)
			assert.Contains(t, found[policy.ModeKeyword], c.id)
		})
	}
	scopes := []struct {
		name  string
		as    graph.Principal
		scope graph.Scope
		msg   string // empty: allowed
	}{
		{"a narrower scope needs subscopes", tenantReader, t1o1, `principal "tr" may not act in scope t1/o1, beneath its own scope t1: needs permission subscopes`},
		{"with subscopes a narrower scope is fine", deepReader, t1o1, ""},
		{"its own scope is fine", orgReader, t1o1, ""},
		{"another org is outside", orgReader, graph.Scope{TenantID: "t1", OrgID: "o2"}, `scope t1/o2 is outside principal "or"'s scope t1/o1`},
		{"another tenant is outside", deepReader, graph.Scope{TenantID: "t2"}, "outside"},
	}
	for _, c := range scopes {
		t.Run(c.name, func(t *testing.T) {
			s := c.scope
			_, err := f.eng.Search(ctx, c.as, engine.SearchRequest{Query: "orca", Scope: &s})
			if c.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, graph.ErrForbidden)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	t.Run("writing beneath the key's scope needs subscopes", func(t *testing.T) {
		before := len(f.memories(t))
		_, err := f.eng.Ingest(ctx, orgWriter, engine.IngestRequest{Type: "note", Content: "Repo note.", Scope: &t1o1r1})
		require.ErrorIs(t, err, graph.ErrForbidden)
		assert.Contains(t, err.Error(), "needs permission subscopes")
		assert.Len(t, f.memories(t), before)
		res, err := f.eng.Ingest(ctx, who("ow", "", t1o1, "writer", "deep"), engine.IngestRequest{Type: "note", Content: "Repo note.", Scope: &t1o1r1})
		require.NoError(t, err)
		assert.Equal(t, t1o1r1, stored(t, f, res.ID).Scope)
	})
}

func TestAccessLibrarianReach(t *testing.T) {
	f := newAccessFixture(t)
	ctx := ingCtx(t)
	decision := engine.IngestRequest{Content: "We decided to use PostgreSQL for billing."}
	tenantWrite, err := f.eng.Ingest(ctx, who("tw", "", t1, "writer"), decision)
	require.NoError(t, err)
	require.Equal(t, engine.StatusPending, tenantWrite.Status)
	orgWrite, err := f.eng.Ingest(ctx, who("ow", "", t1o1, "writer"), decision)
	require.NoError(t, err)
	require.Equal(t, engine.StatusPending, orgWrite.Status)

	orgLib := who("ol", "", t1o1, "librarian")
	tenantLib := who("tl", "", t1, "librarian")
	deepLib := who("dl", "", t1, "librarian", "deep")
	cases := []struct {
		name    string
		as      graph.Principal
		request string
		reaches bool
	}{
		{"an org librarian cannot decide a tenant-wide write", orgLib, tenantWrite.RequestID, false},
		{"an org librarian decides its org's write", orgLib, orgWrite.RequestID, true},
		{"a tenant librarian decides a tenant-wide write", tenantLib, tenantWrite.RequestID, true},
		{"a tenant librarian without subscopes cannot decide an org's write", tenantLib, orgWrite.RequestID, false},
		{"with subscopes it can", deepLib, orgWrite.RequestID, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reqs, _, err := f.eng.ListGateRequests(ctx, c.as, "", graph.Page{})
			require.NoError(t, err)
			var listed []string
			for _, g := range reqs {
				listed = append(listed, g.ID)
			}
			_, gerr := f.eng.GetGateRequest(ctx, c.as, c.request)
			if !c.reaches {
				assert.NotContains(t, listed, c.request)
				require.ErrorIs(t, gerr, graph.ErrNotFound)
				_, err := f.eng.ApproveGateRequest(ctx, c.as, c.request, "")
				require.ErrorIs(t, err, graph.ErrNotFound)
				_, err = f.eng.RejectGateRequest(ctx, c.as, c.request, "no")
				require.ErrorIs(t, err, graph.ErrNotFound)
				return
			}
			assert.Contains(t, listed, c.request)
			require.NoError(t, gerr)
		})
	}
	t.Run("approved by the librarians that reach them", func(t *testing.T) {
		d, err := f.eng.ApproveGateRequest(ctx, tenantLib, tenantWrite.RequestID, "")
		require.NoError(t, err)
		assert.Equal(t, t1, stored(t, f, d.Result.ID).Scope)
		d, err = f.eng.ApproveGateRequest(ctx, orgLib, orgWrite.RequestID, "")
		require.NoError(t, err)
		assert.Equal(t, t1o1, stored(t, f, d.Result.ID).Scope)
	})
}

func TestAccessPolicyReload(t *testing.T) {
	f := newAccessFixture(t)
	load := func() (*policy.Policy, error) {
		p, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
		if err == nil {
			accessRoles(p)
		}
		return p, err
	}
	cases := []struct {
		name  string
		roles []string
		ok    bool
	}{
		{"a tenant admin may not reload", []string{"admin"}, false},
		{"a librarian may not", []string{"librarian"}, false},
		{"an operator may", []string{"operator"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.eng.ReloadPolicy(ingCtx(t), who("p", "", t1, c.roles...), load)
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, graph.ErrForbidden)
			assert.Contains(t, err.Error(), `lacks permission "policy_reload"`)
		})
	}
}
