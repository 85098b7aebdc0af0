package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// testKeywordStatistics holds the rule of keyword scores: a score depends
// only on the memories its filter admits (graph.Filter.Admits: the scope and
// the scopes above it, public memories and the reader's own private ones),
// never on what the reader cannot read, so no score reveals another
// tenant's, another org's or repo's, or another user's private memories.
//
//	tenant T                         tenant U
//	├── T        "harbour tide ..."  └── U  (30 memories full of the terms)
//	├── T/o1     4 memories, public and u1's own
//	│   ├── u2's private memories    (30, full of the terms)
//	│   └── T/o1/r1                  (30, beneath the reader's scope)
//	└── T/o2                         (30)
//
// The reader (T/o1, user u1) records its scores, which must be BM25
// (graph/bm25) over the memories it may read; every write it cannot read
// leaves them as they were, to 1e-9; a write it can read changes them.
func testKeywordStatistics(t *testing.T, x *suite) {
	tenant := newScope(t).TenantID
	sc := func(org, repo string) graph.Scope { return graph.Scope{TenantID: tenant, OrgID: org, RepoID: repo} }
	mem := func(s graph.Scope, user string, vis graph.Visibility, title, content string) graph.MemoryInput {
		in := memIn(s, title, content)
		in.Memory.UserID, in.Memory.Visibility = user, vis
		return in
	}
	o1 := sc("o1", "")
	f := graph.Filter{Scope: o1, Reader: graph.Reader{UserID: "u1"}}
	readable := map[string]graph.MemoryInput{}
	for _, in := range []graph.MemoryInput{
		mem(sc("", ""), "", graph.VisibilityProject, "Harbour tide table", "the harbour tide table for the spring"),
		mem(o1, "u1", graph.VisibilityUser, "Harbour log", "harbour cranes stood idle all week"),
		mem(o1, "u2", graph.VisibilityProject, "Crane schedule", "crane crews rotate at the harbour"),
		mem(o1, "u3", graph.VisibilityGlobal, "Tide notes", "a tide of paperwork"),
		mem(o1, "u1", graph.VisibilityUser, "Lunch", "soup on tuesdays"), // no term: counts in N and lengths
	} {
		readable[x.create(t, in).Memory.ID] = in
	}
	const query = "harbour tide crane"
	scores := func(t *testing.T) map[string]float64 {
		t.Helper()
		got, err := x.s.KeywordSearch(ctx(t), f, query, 100)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, s := range got {
			if f.Admits(s.Memory) { // what the filter must drop is the scope tests' business
				out[s.Memory.ID] = s.Score
			}
		}
		return out
	}
	before := scores(t)
	require.Len(t, before, 4, "the reader's matches")
	want := bm25Scores(readable, query)
	for id, got := range before {
		assert.InEpsilon(t, want[id], got, 1e-9, "score of %s: BM25 over the reader's memories", id)
	}

	unreadable := map[string]func(i int) graph.MemoryInput{
		"AnotherTenant": func(i int) graph.MemoryInput {
			return mem(graph.Scope{TenantID: "u" + tenant}, "", graph.VisibilityProject, "Harbour tide crane", "harbour tide crane")
		},
		"AnotherOrg": func(i int) graph.MemoryInput {
			return mem(sc("o2", ""), "", graph.VisibilityProject, "Harbour crane", "harbour harbour crane tide")
		},
		"RepoBeneath": func(i int) graph.MemoryInput {
			return mem(sc("o1", "r1"), "", graph.VisibilityProject, "Tide", "tide tide harbour")
		},
		"AnotherUsersPrivate": func(i int) graph.MemoryInput {
			vis := graph.VisibilityUser
			if i%2 == 1 {
				vis = graph.VisibilitySession
			}
			return mem(o1, "u2", vis, "Crane", "crane harbour tide crane")
		},
	}
	for name, gen := range unreadable {
		t.Run(name, func(t *testing.T) {
			var ins []graph.MemoryInput
			for i := range 30 {
				in := gen(i)
				if i%3 == 0 { // and memories without the terms: other counts and lengths
					in.Memory.Title, in.Version.Content = fmt.Sprintf("Filler %d", i), "a much longer filler text with none of the words asked for"
				}
				ins = append(ins, in)
			}
			_, err := x.s.CreateMemories(ctx(t), ins)
			require.NoError(t, err)
			after := scores(t)
			require.Len(t, after, len(before), "the reader's matches")
			for id, want := range before {
				assert.InEpsilon(t, want, after[id], 1e-9, "score of %s", id)
			}
		})
	}
	t.Run("ReadableWriteCounts", func(t *testing.T) {
		// The case can fail: a memory the reader may read is part of its
		// statistics, so its scores move.
		x.create(t, mem(o1, "", graph.VisibilityProject, "Harbour", "harbour harbour harbour"))
		after := scores(t)
		require.Len(t, after, len(before)+1)
		for id, was := range before {
			assert.NotEqual(t, was, after[id], "score of %s moves with the reader's statistics", id)
		}
	})
}

// bm25Scores scores the documents of docs that hold a term of query with
// BM25 (graph/bm25) over the statistics of docs: the reference both
// backends must equal.
func bm25Scores(docs map[string]graph.MemoryInput, query string) map[string]float64 {
	indexed := map[string]bm25.Doc{}
	var tokens float64
	df := map[string]float64{}
	for id, in := range docs {
		d := bm25.Index(in.Memory.Title, graph.SearchText(in.Version.IndexText, in.Version.Content))
		indexed[id] = d
		tokens += float64(d.Len)
		for _, t := range d.Terms {
			df[t]++
		}
	}
	n := float64(len(docs))
	out := map[string]float64{}
	for id, d := range indexed {
		score := 0.0
		for _, t := range bm25.QueryTerms(query) {
			if i := slices.Index(d.Terms, t); i >= 0 {
				score += bm25.IDF(n, df[t]) * bm25.Saturate(float64(d.Freqs[i]), float64(d.Len), tokens/n)
			}
		}
		if score > 0 {
			out[id] = score
		}
	}
	return out
}
