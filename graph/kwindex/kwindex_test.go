package kwindex

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

// TestHeld: the index counts each tenant's live memories and their
// postings (distinct terms, summed) through puts, replacements, drops and
// the compaction of the dead.
func TestHeld(t *testing.T) {
	x := New(func(a, b string) bool { return a > b })
	sc := graph.Scope{TenantID: "t1"}
	put := func(key, body string) {
		x.Update(func(w Writer[string]) { w.PutText(key, sc, "", graph.VisibilityProject, "", body) })
	}
	held := func(want [2]int) {
		t.Helper()
		m, p := x.Held("t1")
		assert.Equal(t, want, [2]int{m, p})
	}
	held([2]int{0, 0})
	put("a", "orca pod travel north") // 4 terms
	put("b", "orca orca orca")        // 1 term, three times
	held([2]int{2, 5})
	put("a", "orca pod") // replaced: 2 terms
	held([2]int{2, 3})
	x.Update(func(w Writer[string]) { w.Drop("t1", "b") })
	held([2]int{1, 2})
	for i := range 2000 { // enough dead documents to compact
		put("c", []string{"kelp forest", "tide pool"}[i%2])
	}
	held([2]int{2, 4})
	m, p := x.Held("t2")
	assert.Zero(t, m+p, "a tenant never put")
	assert.Equal(t, 2, x.Live("t1"))
}

// TestRankingRelease: a released ranking's heap serves the next query,
// which ranks as on a fresh index.
func TestRankingRelease(t *testing.T) {
	sc := graph.Scope{TenantID: "t1"}
	f := graph.Filter{Scope: sc, Reader: graph.System}
	fill := func(x *Index[string]) {
		x.Update(func(w Writer[string]) {
			for i, body := range []string{"orca pod", "orca kelp", "kelp forest", "orca orca pod", "tide pool", "pod of orca"} {
				w.PutText(string(rune('a'+i)), sc, "", graph.VisibilityProject, "", body)
			}
		})
	}
	all := func(r *Ranking[string]) []string {
		var keys []string
		keys = r.Next(keys, map[string]float64{}, 100)
		return keys
	}
	fresh, reused := New(func(a, b string) bool { return a > b }), New(func(a, b string) bool { return a > b })
	fill(fresh)
	fill(reused)
	for _, terms := range [][]string{{"orca"}, {"kelp"}, {"orca", "pod"}, {"tide"}, {"orca"}} {
		want := all(fresh.Rank(f, terms))
		r := reused.Rank(f, terms)
		assert.Equal(t, want, all(r), "%v", terms)
		r.Release()
		assert.Zero(t, r.Len(), "empty once released")
		r.Release() // a second release is harmless
	}
	got := all(fresh.Rank(f, []string{"orca"}))
	assert.Len(t, got, 4, "the four orca documents")
	assert.Equal(t, "d", got[0], "orca twice first")
}
