package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// readCall is one Store read, called with a filter.
type readCall struct {
	name string
	call func(ctx context.Context, f graph.Filter) error
}

// readCalls lists every Store read that takes a Filter, each called with
// memory id (any id will do for the records: only the filter matters to
// the cases that use this list), and those of every capability the store
// implements.
func (x *suite) readCalls(id string) []readCall {
	s := x.s
	calls := []readCall{
		{"GetMemory", func(c context.Context, f graph.Filter) error { _, err := s.GetMemory(c, f, id); return err }},
		{"GetMemories", func(c context.Context, f graph.Filter) error { _, err := s.GetMemories(c, f, []string{id}); return err }},
		{"GetVersion", func(c context.Context, f graph.Filter) error { _, err := s.GetVersion(c, f, id); return err }},
		{"GetVersions", func(c context.Context, f graph.Filter) error { _, err := s.GetVersions(c, f, []string{id}); return err }},
		{"GetChunks", func(c context.Context, f graph.Filter) error { _, err := s.GetChunks(c, f, id); return err }},
		{"Resolve", func(c context.Context, f graph.Filter) error { _, err := s.Resolve(c, f, id); return err }},
		{"ListMemories", func(c context.Context, f graph.Filter) error {
			_, err := s.ListMemories(c, f, graph.Page{})
			return err
		}},
		{"Candidates", func(c context.Context, f graph.Filter) error {
			_, err := s.Candidates(c, f, []string{"x"}, 5)
			return err
		}},
		{"Neighbours", func(c context.Context, f graph.Filter) error {
			_, err := s.Neighbours(c, f, []string{id}, 5)
			return err
		}},
		{"KeywordSearch", func(c context.Context, f graph.Filter) error {
			_, err := s.KeywordSearch(c, f, "marker", 5)
			return err
		}},
		{"ListAudit", func(c context.Context, f graph.Filter) error {
			_, _, err := s.ListAudit(c, f, graph.AuditQuery{}, graph.Page{})
			return err
		}},
		{"GetGateRequest", func(c context.Context, f graph.Filter) error { _, err := s.GetGateRequest(c, f, id); return err }},
		{"ListGateRequests", func(c context.Context, f graph.Filter) error {
			_, _, err := s.ListGateRequests(c, f, "", graph.Page{})
			return err
		}},
		{"GetContextReceipt", func(c context.Context, f graph.Filter) error { _, err := s.GetContextReceipt(c, f, id); return err }},
	}
	if pr := x.pr; pr != nil {
		calls = append(calls,
			readCall{"GetProposal", func(c context.Context, f graph.Filter) error { _, err := pr.GetProposal(c, f, id); return err }},
			readCall{"GetDecision", func(c context.Context, f graph.Filter) error { _, err := pr.GetDecision(c, f, id); return err }},
			readCall{"GetBaseline", func(c context.Context, f graph.Filter) error { _, err := pr.GetBaseline(c, f, id); return err }})
	}
	if ed := x.ed; ed != nil {
		calls = append(calls,
			readCall{"GetEdit", func(c context.Context, f graph.Filter) error { _, err := ed.GetEdit(c, f, id); return err }},
			readCall{"ListEdits", func(c context.Context, f graph.Filter) error {
				_, err := ed.ListEdits(c, f, graph.EditQuery{})
				return err
			}})
	}
	if cp := x.cp; cp != nil {
		calls = append(calls,
			readCall{"GetCapsule", func(c context.Context, f graph.Filter) error {
				_, err := cp.GetCapsule(c, f, capsuleReader, id)
				return err
			}},
			readCall{"ListCapsules", func(c context.Context, f graph.Filter) error {
				_, _, err := cp.ListCapsules(c, f, capsuleReader, graph.Page{})
				return err
			}})
	}
	return calls
}

// aclMemory is one memory of the users case, as written.
type aclMemory struct {
	m       graph.Memory
	version string
}

// testUsers checks the user half of the access rule with the scope half on
// every memory read: several users of one tenant, private (user, session)
// and shared (project, policy, global) memories, owned and unowned, in
// scopes at every level; readers acting as one user (plain), as every user
// (AllUsers), beneath their scope (Subscopes) or as the engine (System).
// Every read must return exactly the memories graph.Filter.Admits admits
// (and the caller's narrowing keeps), no more, no fewer.
func testUsers(t *testing.T, x *suite) {
	tenant := newScope(t).TenantID
	sc := func(org, repo string) graph.Scope { return graph.Scope{TenantID: tenant, OrgID: org, RepoID: repo} }
	scopes := []graph.Scope{sc("", ""), sc("o1", ""), sc("o1", "r1"), sc("o2", "")}
	kinds := []struct {
		owner string
		vis   graph.Visibility
	}{
		{"u1", graph.VisibilityUser}, {"u2", graph.VisibilityUser}, {"u2", graph.VisibilitySession},
		{"", graph.VisibilityUser}, {"", graph.VisibilitySession}, {"u1", graph.VisibilityProject},
		{"u2", graph.VisibilityGlobal}, {"u2", graph.VisibilityPolicy},
	}
	// Readable kinds: u1 reads 6 (all but u2's user and session ones), u2
	// reads 7, a user with no memories 5, AllUsers 8.
	n := len(scopes) * len(kinds)
	var (
		all                 []aclMemory
		publicSeed, private string // tenant-wide seeds: unowned, u2's own
		// One of every other record per scope (named by index, oldest
		// first): they have no owner, so the scope rule alone decides.
		order []string
		recs  = map[string]scopedRecords{}
	)
	for i := range n {
		s, k := scopes[i%len(scopes)], kinds[i/len(scopes)]
		// Created times interleave the kinds (i*7 mod n is a permutation: n
		// is a multiple of 4 and 8, coprime to 7), so "newest first" mixes
		// what a reader may and may not read.
		at := base.Add(time.Duration(i*7%n) * time.Minute)
		in := graph.MemoryInput{
			Memory: graph.Memory{Scope: s, Type: "note", UserID: k.owner, Visibility: k.vis, CreatedAt: at,
				Title: fmt.Sprintf("acl %d %s %s", i, k.owner, k.vis)},
			Version: graph.VersionInput{Content: "zanzibar reef survey notes", Entities: []graph.EntityRef{ent("Zanzibar Reef", "place")},
				Chunks: []graph.ChunkInput{{Key: "all", Start: 0, End: 8}}},
		}
		c := x.create(t, in)
		all = append(all, aclMemory{m: c.Memory, version: c.Version.ID})
		if i < len(scopes) {
			name := fmt.Sprint(i)
			order = append(order, name)
			recs[name] = x.buildRecords(t, s, c, base.Add(time.Duration(i)*time.Minute))
		}
		if s == sc("", "") && k.owner == "" && k.vis == graph.VisibilitySession {
			publicSeed = c.Memory.ID // unowned, so shared despite its visibility
		}
		if s == sc("", "") && k.owner == "u2" && k.vis == graph.VisibilityUser {
			private = c.Memory.ID
		}
	}
	require.NotEmpty(t, publicSeed)
	require.NotEmpty(t, private)

	filter := func(s graph.Scope, r graph.Reader) graph.Filter { return graph.Filter{Scope: s, Reader: r} }
	narrowed := func(f graph.Filter, user string) graph.Filter { f.UserID = user; return f }
	for _, c := range []struct {
		name string
		f    graph.Filter
		// count is how many memories the reader reads, worked out by hand
		// from the rule (kinds readable x scopes seen), so the oracle is
		// checked too and cannot agree with a store that returns nothing.
		count int
	}{
		{"PlainU1InOrg", filter(sc("o1", ""), graph.Reader{UserID: "u1"}), 2 * 6},
		{"PlainU2InRepo", filter(sc("o1", "r1"), graph.Reader{UserID: "u2"}), 3 * 7},
		{"PlainU3TenantWide", filter(sc("", ""), graph.Reader{UserID: "u3"}), 1 * 5},
		{"PlainU1OtherOrg", filter(sc("o2", ""), graph.Reader{UserID: "u1"}), 2 * 6},
		{"NarrowedToAnotherUser", narrowed(filter(sc("o1", ""), graph.Reader{UserID: "u1"}), "u2"), 2 * 2},
		{"AllUsersInOrg", filter(sc("o1", ""), graph.Reader{UserID: "u3", AllUsers: true}), 2 * 8},
		{"SubscopesU1", filter(sc("", ""), graph.Reader{UserID: "u1", Subscopes: true}), 4 * 6},
		{"System", filter(sc("", ""), graph.System), n},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // reads only (Neo4j answers each read in milliseconds; they overlap)
			var want []aclMemory
			for _, a := range all {
				if c.f.Admits(a.m) && (c.f.UserID == "" || a.m.UserID == c.f.UserID) {
					want = append(want, a)
				}
			}
			require.Len(t, want, c.count, "Filter.Admits disagrees with the rule worked out by hand")
			x.checkReads(t, c.f, all, want, []string{publicSeed, private})
			seen := map[string]bool{}
			for i, s := range scopes {
				seen[fmt.Sprint(i)] = c.f.Admits(graph.Memory{Scope: s}) // no owner: the scope rule
			}
			x.checkRecords(t, c.f, order, recs, seen)
		})
	}
	t.Run("ResolveStopsAtWhatTheReaderMayRead", func(t *testing.T) {
		s := newScope(t)
		old := memIn(s, "shared plan", "the shared plan", "plan")
		old.Memory.Visibility = graph.VisibilityProject
		oldID := x.create(t, old).Memory.ID
		nw := memIn(s, "private plan", "u2's private plan", "plan")
		nw.Memory.UserID, nw.Memory.Visibility, nw.Supersedes = "u2", graph.VisibilityUser, oldID
		newID := x.create(t, nw).Memory.ID
		for _, c := range []struct {
			reader graph.Reader
			want   string
		}{
			{graph.Reader{UserID: "u1"}, oldID},
			{graph.Reader{UserID: "u2"}, newID},
			{graph.Reader{UserID: "u1", AllUsers: true}, newID},
		} {
			m, err := x.s.Resolve(ctx(t), graph.Filter{Scope: s, Reader: c.reader}, oldID)
			require.NoError(t, err)
			assert.Equal(t, c.want, m.ID, "reader %+v", c.reader)
		}
		_, err := x.s.Resolve(ctx(t), graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}}, newID)
		assert.ErrorIs(t, err, graph.ErrNotFound, "u1 resolves u2's private memory")
	})
}

// checkReads asserts that every memory read under f returns exactly want
// out of all (all active, each with one version and one chunk, each
// mentioning one entity and matching the keyword "zanzibar"); seeds are the
// Neighbours seeds to try.
func (x *suite) checkReads(t *testing.T, f graph.Filter, all, want []aclMemory, seeds []string) {
	t.Helper()
	admitted := map[string]bool{}
	var wantIDs, allIDs, allVersions, wantVersions []string
	for _, a := range want {
		admitted[a.m.ID] = true
		wantIDs = append(wantIDs, a.m.ID)
		wantVersions = append(wantVersions, a.version)
	}
	for _, a := range all {
		allIDs = append(allIDs, a.m.ID)
		allVersions = append(allVersions, a.version)
	}
	// notFound accepts ErrNotFound or, where a backend answers a list read
	// of something unreadable with nothing, an empty result.
	notFound := func(t *testing.T, err error, n int, what string) {
		t.Helper()
		if err == nil {
			assert.Zero(t, n, "%s returned what the reader may not read", what)
			return
		}
		assert.ErrorIs(t, err, graph.ErrNotFound, what)
	}

	t.Run("GetMemory", func(t *testing.T) {
		for _, a := range all {
			m, err := x.s.GetMemory(ctx(t), f, a.m.ID)
			if admitted[a.m.ID] {
				if assert.NoError(t, err, "GetMemory %q", a.m.Title) {
					assert.Equal(t, a.m.ID, m.ID)
				}
			} else {
				assert.ErrorIs(t, err, graph.ErrNotFound, "GetMemory %q", a.m.Title)
			}
		}
	})
	t.Run("GetMemories", func(t *testing.T) {
		ms, err := x.s.GetMemories(ctx(t), f, allIDs)
		require.NoError(t, err)
		assert.ElementsMatch(t, wantIDs, memIDs(ms))
	})
	t.Run("GetVersion", func(t *testing.T) {
		for _, a := range all {
			v, err := x.s.GetVersion(ctx(t), f, a.version)
			if admitted[a.m.ID] {
				if assert.NoError(t, err, "GetVersion of %q", a.m.Title) {
					assert.Equal(t, a.m.ID, v.MemoryID)
				}
			} else {
				assert.ErrorIs(t, err, graph.ErrNotFound, "GetVersion of %q", a.m.Title)
			}
		}
	})
	t.Run("GetVersions", func(t *testing.T) {
		vs, err := x.s.GetVersions(ctx(t), f, allVersions)
		require.NoError(t, err)
		var got []string
		for _, v := range vs {
			got = append(got, v.ID)
		}
		assert.ElementsMatch(t, wantVersions, got)
	})
	t.Run("GetChunks", func(t *testing.T) {
		for _, a := range all {
			cs, err := x.s.GetChunks(ctx(t), f, a.version)
			if admitted[a.m.ID] {
				if assert.NoError(t, err, "GetChunks of %q", a.m.Title) {
					assert.Len(t, cs, 1)
				}
			} else {
				notFound(t, err, len(cs), "GetChunks of "+a.m.Title)
			}
		}
	})
	t.Run("Resolve", func(t *testing.T) {
		for _, a := range all {
			m, err := x.s.Resolve(ctx(t), f, a.m.ID)
			if admitted[a.m.ID] {
				if assert.NoError(t, err, "Resolve %q", a.m.Title) {
					assert.Equal(t, a.m.ID, m.ID)
				}
			} else {
				assert.ErrorIs(t, err, graph.ErrNotFound, "Resolve %q", a.m.Title)
			}
		}
	})
	t.Run("ListMemories", func(t *testing.T) {
		assert.ElementsMatch(t, wantIDs, x.listAll(t, f, 7))
	})
	t.Run("Candidates", func(t *testing.T) {
		cs, err := x.s.Candidates(ctx(t), f, []string{"zanzibar reef"}, 1000)
		require.NoError(t, err)
		assert.ElementsMatch(t, wantIDs, candIDs(cs))
	})
	t.Run("KeywordSearch", func(t *testing.T) {
		ks, err := x.s.KeywordSearch(ctx(t), f, "zanzibar", 1000)
		require.NoError(t, err)
		assert.ElementsMatch(t, wantIDs, scoredIDs(ks))
	})
	t.Run("Neighbours", func(t *testing.T) {
		// Every memory shares the one entity equally, so a readable seed's
		// neighbours are the NeighbourFanout newest admitted memories that
		// are not seeds, newest first; an unreadable seed has none.
		isSeed := map[string]bool{}
		for _, s := range seeds {
			isSeed[s] = true
		}
		var pool []graph.Memory
		for _, a := range want {
			if !isSeed[a.m.ID] {
				pool = append(pool, a.m)
			}
		}
		slices.SortFunc(pool, func(a, b graph.Memory) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return cmp.Compare(b.ID, a.ID)
		})
		expect := memIDs(pool[:min(len(pool), graph.NeighbourFanout)])
		ns, err := x.s.Neighbours(ctx(t), f, seeds, 1000)
		require.NoError(t, err)
		got := neighbourIDs(ns)
		for _, s := range seeds {
			seed := graph.Memory{}
			for _, a := range all {
				if a.m.ID == s {
					seed = a.m
				}
			}
			if f.Admits(seed) {
				assert.Equal(t, expect, got[s], "neighbours of readable seed %q", seed.Title)
			} else {
				assert.Empty(t, got[s], "neighbours of unreadable seed %q", seed.Title)
			}
		}
		for _, n := range ns {
			assert.True(t, admitted[n.Memory.ID], "neighbour %q is not admitted", n.Memory.Title)
		}
	})
}
