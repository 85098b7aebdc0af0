package neo4j_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestAdmissionMatchesCypher holds the walk's admission in the process
// (memAttrs, kept current by the keyword catch-up) to memoryVisible in
// Neo4j, after every kind of write that changes what the filter admits or
// what the walk follows: creates in sessions (NEXT), supersessions,
// archive, restore, approved retract / quarantine / block edits, a new
// version, an erasure that relinks a session, relations written and
// deleted (the walk's relation step follows them over the copy). Each stage checks, on the
// writing process and on a second one that only reads (its copy comes from
// the stamps alone):
//   - for 60 random filters, the memories the copy admits are those Neo4j
//     admits;
//   - the NEXT and SUPERSEDES links and the relations the copy holds are
//     Neo4j's;
//   - for random walks under those filters, the walk over the copy returns
//     what the walk in Neo4j (walkHop1Cypher, walkHop2Cypher) returns, to
//     the last bit of each score; Neighbours of random seeds and keyword
//     searches what they return filtering in Neo4j (and the ids the
//     ranking names before the read, KeywordSearchRanked, the first hits);
//     the first of these calls after a write finds b's copy behind
//     (overCopy's retry).
//
// It fails when a write above does not stamp its memory (checked by hand
// for archive, restore, supersede, the edits, the erasure's relink and the
// relation writes) or when a clause of the admission differs.
func TestAdmissionMatchesCypher(t *testing.T) {
	cfg := neo4jtest.Config(t)
	a := neo4jtest.Open(t, cfg)
	b, err := neo4j.Open(t.Context(), cfg) // a second process: reads only
	tr.NoError(t, err)
	defer b.Close()
	ctx := t.Context()

	tenant := "adm"
	scopes := []graph.Scope{
		{TenantID: tenant}, {TenantID: tenant, OrgID: "o1"}, {TenantID: tenant, OrgID: "o1", RepoID: "r1"},
		{TenantID: tenant, OrgID: "o2"}, {TenantID: tenant, OrgID: "o2", RepoID: "r2"},
	}
	users := []string{"", "u1", "u2"}
	vis := []graph.Visibility{graph.VisibilityUser, graph.VisibilitySession, graph.VisibilityProject, graph.VisibilityGlobal}
	types := []string{"note", "doc", "task"}
	subjects := []string{"", "alice", "bob"}
	projects := []string{"", "p1", "p2"}
	r := rand.New(rand.NewPCG(5, 6))
	pick := func(n int) int { return r.IntN(n) }
	now := time.Now().UTC().Truncate(time.Second)

	c := storetest.Corpus(graph.Scope{}, 11, 160)
	ins := c.Inputs
	for i := range ins {
		m := &ins[i].Memory
		sc := scopes[pick(len(scopes))]
		user := users[pick(len(users))]
		m.Scope, m.UserID, m.Visibility, m.Type = sc, user, vis[pick(len(vis))], types[pick(len(types))]
		m.Tags = []string{fmt.Sprintf("t%d", pick(3)), fmt.Sprintf("t%d", 3+pick(2))}
		if s := subjects[pick(len(subjects))]; s != "" {
			m.SubjectType, m.SubjectID = "person", s
		}
		m.ProjectID = projects[pick(len(projects))]
		m.CreatedAt = now.Add(-time.Duration(len(ins)-i) * time.Minute)
		if i%4 == 0 { // sessions of one scope and owner, so that NEXT chains form
			m.Scope, m.UserID, m.SessionID = scopes[1], "u1", fmt.Sprintf("s%d", i%3)
		}
		switch pick(4) {
		case 0:
			m.ValidFrom = now.Add(-time.Duration(pick(200)) * time.Minute)
		case 1:
			m.ValidTo = now.Add(time.Duration(pick(200)-100) * time.Minute)
		case 2:
			m.ValidFrom = now.Add(-3 * time.Hour)
			m.ValidTo = now.Add(time.Duration(pick(200)-100) * time.Minute)
		}
	}
	var created []graph.Created
	for lo := 0; lo < len(ins); lo += 40 {
		out, err := a.CreateMemories(ctx, ins[lo:min(lo+40, len(ins))])
		tr.NoError(t, err)
		created = append(created, out...)
	}
	id := func(i int) string { return created[i].Memory.ID }
	scopeOf := func(i int) graph.Scope { return created[i].Memory.Scope }
	// relate writes up to n relations between random memories, in the
	// scope of one end or in any scope (the write needs its scope to
	// reach both ends, so some are refused; one narrower than both ends
	// is one a reader of both may not reach), and returns the memories
	// they join.
	relTypes := graph.RelationTypes
	var relations []graph.Relation
	relate := func(n int) (ends []string) {
		t.Helper()
		for tries := 0; len(ends) < 2*n && tries < 50*n; tries++ {
			i, j := pick(len(created)), pick(len(created))
			if i == j {
				continue
			}
			sc := scopeOf(i)
			switch pick(3) {
			case 0:
				sc = scopeOf(j)
			case 1:
				sc = scopes[pick(len(scopes))]
			}
			rel, made, err := a.CreateRelation(ctx, graph.Relation{Scope: sc, FromID: id(i), ToID: id(j),
				Type: relTypes[pick(len(relTypes))], CreatedBy: "curator"})
			if errors.Is(err, graph.ErrNotFound) {
				continue
			}
			tr.NoError(t, err)
			if made {
				relations = append(relations, rel)
				ends = append(ends, id(i), id(j))
			}
		}
		return ends
	}
	relate(40)

	readers := []graph.Reader{graph.System, {UserID: "u1"}, {UserID: "u2", Subscopes: true}, {UserID: "u3"}}
	statuses := [][]graph.Status{nil, {graph.StatusActive, graph.StatusSuperseded}, {graph.StatusArchived},
		{graph.StatusRetracted, graph.StatusActive}}
	filter := func() graph.Filter {
		f := graph.Filter{Scope: scopes[pick(len(scopes))], Reader: readers[pick(len(readers))], Statuses: statuses[pick(len(statuses))]}
		if pick(2) == 0 {
			f.ValidAt = now.Add(time.Duration(pick(200)-100) * time.Minute)
		}
		if pick(4) == 0 {
			f.UserID = users[1+pick(2)]
		}
		if pick(4) == 0 {
			f.Types = []string{types[pick(len(types))]}
		}
		if pick(4) == 0 {
			f.Tags = []string{fmt.Sprintf("t%d", pick(3))}
		}
		if pick(4) == 0 {
			f.Visibility = []graph.Visibility{vis[pick(len(vis))], vis[pick(len(vis))]}
		}
		if pick(5) == 0 {
			f.SubjectType, f.SubjectID = "person", subjects[1+pick(2)]
		}
		if pick(5) == 0 {
			f.ProjectID = projects[1+pick(2)]
		}
		if pick(6) == 0 {
			f.SessionID = "s1"
		}
		if pick(4) == 0 {
			f.CreatedAfter = now.Add(-time.Duration(pick(160)) * time.Minute)
		}
		if pick(4) == 0 {
			f.CreatedBefore = now.Add(-time.Duration(pick(160)) * time.Minute)
			if !f.CreatedAfter.IsZero() && !f.CreatedBefore.After(f.CreatedAfter) {
				f.CreatedAfter, f.CreatedBefore = f.CreatedBefore, f.CreatedAfter.Add(time.Minute)
			}
		}
		if pick(3) == 0 {
			f.Channel = "email"
		}
		f.IncludeQuarantined = pick(3) == 0
		return f
	}

	// Walks, neighbours and keyword searches that returned something,
	// filters that admitted something.
	walked, neighboured, searched, admitted := 0, 0, 0, 0
	queries := c.KeywordQueries(20)
	// bothPaths runs the reads on b over its copy first (after a write,
	// b's first call finds the copy behind by the sequence its read
	// returns, and catches up), then filtering in Neo4j.
	type reads struct {
		walk       []graph.Walked
		neighbours []graph.Neighbour
		keyword    []graph.Scored
	}
	bothPaths := func(f graph.Filter, req graph.WalkRequest, seeds []string, q string) (overCopy, inNeo4j reads) {
		t.Helper()
		defer b.SetCypherFilter(false)
		for _, x := range []struct {
			cypher bool
			out    *reads
		}{{false, &overCopy}, {true, &inNeo4j}} {
			b.SetCypherFilter(x.cypher)
			var err error
			x.out.walk, err = b.Walk(ctx, f, req)
			tr.NoError(t, err)
			x.out.neighbours, err = b.Neighbours(ctx, f, seeds, 4)
			tr.NoError(t, err)
			var ranked []string
			called := false
			x.out.keyword, err = b.KeywordSearchRanked(ctx, f, q, 20, 3, func(ids []string) { ranked, called = ids, true })
			tr.NoError(t, err)
			if !x.cypher && q != "" {
				// The walk above brought the copy up to date: the ids the
				// ranking named before the read are the first hits.
				tr.True(t, called, "KeywordSearchRanked over the copy named no ids")
				var first []string
				for _, h := range x.out.keyword[:min(3, len(x.out.keyword))] {
					first = append(first, h.Memory.ID)
				}
				assert.Equal(t, first, ranked, "KeywordSearchRanked %q under %+v", q, f)
			} else {
				assert.False(t, called, "KeywordSearchRanked in Neo4j named ids")
			}
		}
		return overCopy, inNeo4j
	}
	check := func(stage string, changed ...string) {
		t.Helper()
		// First, on b, calls that reach the memories the write changed,
		// over b's copy while it is behind, then in Neo4j.
		if len(changed) > 0 {
			f := graph.Filter{Scope: graph.Scope{TenantID: tenant}, Reader: graph.System}
			req := graph.WalkRequest{Limit: 30, Damping: 0.5, Memories: map[string]float64{}}
			for _, id := range changed {
				req.Memories[id] = 1
			}
			got, want := bothPaths(f, req, changed, "")
			assert.Equal(t, want.walk, got.walk, "%s: walk from the changed memories", stage)
			assert.Equal(t, want.neighbours, got.neighbours, "%s: neighbours of the changed memories", stage)
		}
		for range 60 {
			f := filter()
			tr.NoError(t, f.Validate())
			req := graph.WalkRequest{Limit: 30, Damping: 0.5, Entities: map[string]float64{}, Memories: map[string]float64{}}
			for range 1 + pick(3) {
				req.Entities[c.Entities[pick(40)]] = 1
			}
			if pick(3) == 0 { // an alias (storetest.Corpus gives every tenth entity one)
				req.Entities[strings.ToLower(c.Entities[10*pick(4)])+"-alias"] = 1
			}
			for range pick(3) {
				req.Memories[id(pick(len(created)))] = 1
			}
			var seeds []string
			for range 1 + pick(6) {
				seeds = append(seeds, id(pick(len(created))))
			}
			q := queries[pick(len(queries))]
			got, want := bothPaths(f, req, seeds, q)
			assert.Equal(t, want.walk, got.walk, "%s: walk %v under %+v", stage, req, f)
			assert.Equal(t, want.neighbours, got.neighbours, "%s: neighbours of %v under %+v", stage, seeds, f)
			assert.Equal(t, want.keyword, got.keyword, "%s: keyword search %q under %+v", stage, q, f)
			if len(want.walk) > 0 {
				walked++
			}
			if len(want.neighbours) > 0 {
				neighboured++
			}
			if len(want.keyword) > 0 {
				searched++
			}
			for _, s := range []*neo4j.Store{a, b} {
				local, cypher, ok, err := s.Admitted(ctx, f)
				tr.NoError(t, err)
				tr.True(t, ok)
				assert.Equal(t, cypher, local, "%s: admitted under %+v", stage, f)
				if len(cypher) > 0 {
					admitted++
				}
			}
		}
		for _, s := range []*neo4j.Store{a, b} {
			local, cypher, err := s.Links(ctx, tenant)
			tr.NoError(t, err)
			assert.Equal(t, cypher, local, "%s: links", stage)
			local, cypher, err = s.Rels(ctx, tenant)
			tr.NoError(t, err)
			assert.Equal(t, cypher, local, "%s: relations", stage)
			assert.NotEmpty(t, cypher, "%s: relations", stage)
		}
	}
	check("created")

	// A supersession: a new memory in the old one's scope.
	in := storetest.Corpus(graph.Scope{}, 12, 1).Inputs[0]
	in.Memory.Scope, in.Memory.UserID, in.Memory.Type = scopeOf(1), created[1].Memory.UserID, created[1].Memory.Type
	in.Supersedes = id(1)
	_, err = a.CreateMemories(ctx, []graph.MemoryInput{in})
	tr.NoError(t, err)
	check("superseded", id(1))

	// Relations written and deleted: each stamps one end, and the other
	// end's copy follows from its row (relink).
	check("related", relate(10)...)
	var unrelated []string
	for _, rel := range relations[:5] {
		_, err := a.DeleteRelation(ctx, rel.Scope, rel.ID)
		tr.NoError(t, err)
		unrelated = append(unrelated, rel.FromID, rel.ToID)
	}
	check("unrelated", unrelated...)

	tr.NoError(t, a.Archive(ctx, scopeOf(2), id(2)))
	tr.NoError(t, a.Archive(ctx, scopeOf(3), id(3)))
	check("archived", id(2), id(3))
	tr.NoError(t, a.Restore(ctx, scopeOf(3), id(3)))
	check("restored", id(3))

	for i, e := range []graph.Edit{
		{Kind: graph.EditRetract, TargetMemoryID: id(5)},
		{Kind: graph.EditQuarantine, TargetMemoryID: id(6)},
		{Kind: graph.EditBlock, TargetMemoryID: id(7), Channel: "email"},
	} {
		e.Scope, e.CreatedBy, e.CreatedAt = scopeOf(5+i), "curator", now
		ed, err := a.CreateEdit(ctx, e)
		tr.NoError(t, err)
		_, err = a.DecideEdit(ctx, e.Scope, ed.ID, graph.EditApproved, "lead", now)
		tr.NoError(t, err)
	}
	check("edited", id(5), id(6), id(7))

	_, err = a.AddVersion(ctx, scopeOf(9), id(9), storetest.Corpus(graph.Scope{}, 13, 1).Inputs[0].Version)
	tr.NoError(t, err)
	check("versioned", id(9))

	// Erase the middle of a session (created 4, 16, 28, ... share s1 and
	// s2 ... by i%3): its neighbours are linked around it.
	_, err = a.Erase(ctx, scopeOf(16), graph.EraseInput{IDs: []string{id(16), id(40)}})
	tr.NoError(t, err)
	check("erased", id(4), id(28), id(52)) // relinked around 16 and 40 (session s1: 4, 16, 28, 40, 52, ...)
	// The comparisons had something to compare (9 stages of 60 filters).
	t.Logf("filters that admitted a memory: %d of 1080; walks with results: %d of 540; neighbours: %d of 540; keyword searches: %d of 540",
		admitted, walked, neighboured, searched)
	assert.Greater(t, admitted, 400)
	assert.Greater(t, walked, 60)
	assert.Greater(t, neighboured, 60)
	assert.Greater(t, searched, 60)
}
