package neo4j_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestIndexBound: past Config.IndexMemories, the keyword and mention
// indexes drop the least recently searched tenants whole, never one a
// search is using; a dropped tenant's next search reads it again, writes
// made while it was dropped included, and answers as a store holding every
// tenant does.
func TestIndexBound(t *testing.T) {
	cfg := neo4jtest.Config(t)
	cfg.IndexMemories = 25
	s := neo4jtest.Open(t, cfg)
	all := cfg
	all.IndexMemories = -1
	whole, err := neo4j.Open(t.Context(), all)
	tr.NoError(t, err)
	defer whole.Close()

	c := storetest.Corpus(graph.Scope{}, 7, 10)
	queries := c.KeywordQueries(4)
	for _, tenant := range []string{"a", "b", "c"} {
		in := storetest.Corpus(graph.Scope{TenantID: tenant}, 7, 10).Inputs
		_, err := s.CreateMemories(t.Context(), in)
		tr.NoError(t, err)
	}
	// answers returns what tenant's keyword searches and their results'
	// neighbours give on st, as text.
	answers := func(st *neo4j.Store, tenant string) []string {
		f := graph.Filter{Scope: graph.Scope{TenantID: tenant}, Reader: graph.System}
		var out []string
		for _, q := range append(queries, "walrus") {
			got, err := st.KeywordSearch(t.Context(), f, q, 5)
			if !assert.NoError(t, err) { // assert: answers runs in goroutines too
				return nil
			}
			var ids []string
			for _, g := range got {
				out = append(out, fmt.Sprintf("%s %s %.9f", q, g.Memory.Title, g.Score))
				ids = append(ids, g.Memory.ID)
			}
			ns, err := st.Neighbours(t.Context(), f, ids, 3)
			if !assert.NoError(t, err) {
				return nil
			}
			for _, n := range ns {
				out = append(out, fmt.Sprintf("%s neighbour %s of %s %v", q, n.Memory.Title, n.SeedID, n.Shared))
			}
		}
		return out
	}
	holds := func(want map[string][2]int) {
		t.Helper()
		assert.Equal(t, want, s.IndexHolds())
	}
	ten := [2]int{10, 10}

	for _, tenant := range []string{"a", "b"} {
		tr.NotEmpty(t, answers(s, tenant))
	}
	holds(map[string][2]int{"a": ten, "b": ten})
	assert.Equal(t, answers(whole, "c"), answers(s, "c"))
	holds(map[string][2]int{"b": ten, "c": ten}) // a was used least recently

	// A write in a while it is dropped: its next search reads it again
	// whole, and drops b (c was used after b).
	_, err = s.CreateMemories(t.Context(), []graph.MemoryInput{{
		Memory:  graph.Memory{Scope: graph.Scope{TenantID: "a"}, Type: "note", Title: "walrus", CreatedAt: time.Now().UTC()},
		Version: graph.VersionInput{Content: "a walrus sleeps on the ice", Entities: c.Inputs[0].Version.Entities[:1]},
	}})
	tr.NoError(t, err)
	got := answers(s, "a")
	assert.Equal(t, answers(whole, "a"), got)
	assert.Contains(t, fmt.Sprint(got), "walrus walrus", "the memory written while a was dropped")
	holds(map[string][2]int{"a": {11, 11}, "c": ten})

	// A tenant a search is using stays, though it was used least recently.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	release, err := s.HoldTenant(ctx, "c")
	tr.NoError(t, err)
	releaseA, err := s.HoldTenant(ctx, "a") // a is now used after c
	tr.NoError(t, err)
	releaseA()
	assert.Equal(t, answers(whole, "b"), answers(s, "b"))
	holds(map[string][2]int{"b": ten, "c": ten}) // a, not the held c
	release()
	release() // a second call does nothing
	assert.Equal(t, answers(whole, "a"), answers(s, "a"))
	holds(map[string][2]int{"a": {11, 11}, "b": ten}) // c, now released
	assert.Equal(t, graph.IndexHeld{Memories: 21, Units: 21, Tenants: 2, Limit: 25, Dropped: 4}, s.IndexHeld(),
		"the figures of /metrics: a, b, a and c dropped")

	// Searches of every tenant at once, with room for about one: each
	// answers as the unbounded store does (a tenant is never dropped
	// between a search's catch-up and its read).
	want := map[string][]string{}
	for _, tenant := range []string{"a", "b", "c"} {
		want[tenant] = answers(whole, tenant)
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 5 {
				tenant := []string{"a", "b", "c"}[(g+i)%3]
				assert.Equal(t, want[tenant], answers(s, tenant), "tenant %s", tenant)
			}
		})
	}
	wg.Wait()

	// A warm-up reads tenants until the bound is passed, and drops none of
	// those it read to make room for the last (tenants of 10, 10 and 11),
	// the tenants with the most keyword writes first.
	small := cfg
	small.IndexMemories = 15
	warmed, err := neo4j.Open(t.Context(), small)
	tr.NoError(t, err)
	defer warmed.Close()
	tr.NoError(t, warmed.WarmKeywordIndex(t.Context()))
	h := warmed.IndexHeld()
	assert.Equal(t, 2, h.Tenants, "%+v", h)
	assert.Zero(t, h.Dropped, "%+v", h)
	sizes := map[string]int{"a": 11, "b": 10, "c": 10}
	for tenant := range warmed.IndexHolds() {
		delete(sizes, tenant)
	}
	tr.Equal(t, map[string]int{"c": 10}, sizes,
		"one tenant not warmed, the last of the order: most keyword writes first (a: 2), then by name (b, c: 1)")
	for tenant, n := range sizes {
		assert.Equal(t, answers(whole, tenant), answers(warmed, tenant))
		assert.Equal(t, graph.IndexHeld{Memories: n, Units: n, Tenants: 1, Limit: 15, Dropped: 2}, warmed.IndexHeld(),
			"the next catch-up drops what is over: the warmed tenants, used least recently")
	}

	// No bound: every tenant stays.
	for _, tenant := range []string{"a", "b", "c"} {
		answers(whole, tenant)
	}
	assert.Equal(t, map[string][2]int{"a": {11, 11}, "b": ten, "c": ten}, whole.IndexHolds())
	assert.Equal(t, graph.IndexHeld{Memories: 31, Units: 31, Tenants: 3}, whole.IndexHeld())
}

// TestIndexBoundCountsTerms: a tenant of long documents counts toward the
// bound as its postings over 64 (what the indexes' memory grows with), not
// as its handful of memories. Three documents of ~700 distinct words hold
// as much as ~33 notes: with room for 25 they are held alone, and a search
// of a tenant of ten notes drops them, where counting memories (3 + 10)
// kept both.
func TestIndexBoundCountsTerms(t *testing.T) {
	cfg := neo4jtest.Config(t)
	cfg.IndexMemories = 25
	s := neo4jtest.Open(t, cfg)
	word := func(i int) string { // k + three letters: no stop word, no digit
		return "k" + string(rune('a'+i/676%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
	}
	var docs []graph.MemoryInput
	for d := range 3 {
		var text strings.Builder
		for i := range 700 {
			text.WriteString(word(d*700+i) + " ")
		}
		docs = append(docs, graph.MemoryInput{
			Memory:  graph.Memory{Scope: graph.Scope{TenantID: "docs"}, Type: "document", Title: fmt.Sprintf("doc %d", d), CreatedAt: time.Now().UTC()},
			Version: graph.VersionInput{Content: text.String()},
		})
	}
	_, err := s.CreateMemories(t.Context(), docs)
	tr.NoError(t, err)
	_, err = s.CreateMemories(t.Context(), storetest.Corpus(graph.Scope{TenantID: "notes"}, 7, 10).Inputs)
	tr.NoError(t, err)
	search := func(tenant, q string) []graph.Scored {
		got, err := s.KeywordSearch(t.Context(), graph.Filter{Scope: graph.Scope{TenantID: tenant}, Reader: graph.System}, q, 5)
		tr.NoError(t, err)
		return got
	}

	tr.Len(t, search("docs", word(701)), 1, "the word of one document")
	h := s.IndexHeld()
	assert.Equal(t, 3, h.Memories)
	assert.Greater(t, h.Units, cfg.IndexMemories, "%+v: three documents count for more than the bound", h)
	assert.LessOrEqual(t, h.Units, 3*700/64+1, "%+v", h)
	assert.Zero(t, h.Dropped, "a tenant larger than the bound is held alone")

	search("notes", "harbour")
	assert.Equal(t, map[string][2]int{"notes": {10, 10}}, s.IndexHolds(), "the documents, used least recently, dropped")
	h = s.IndexHeld()
	assert.Equal(t, graph.IndexHeld{Memories: 10, Units: 10, Tenants: 1, Limit: 25, Dropped: 1}, h)
	tr.Len(t, search("docs", word(701)), 1, "read again on the next search")
}
