package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestKeywordScoresEqualFTS5 checks the in-memory keyword index's BM25
// against SQLite FTS5's bm25 (title weight 2) over the same terms: FTS5 gets
// the texts as the index's tokenizer sees them (stemmed terms joined by
// spaces), of the memories the filter admits only. For every query the k-th
// best score must be equal (ties may order differently), and each hit's
// score must be FTS5's for that memory.
//
// OneScope holds every memory in one scope, read by a reader that reaches
// them all. AdmittedOnly adds memories the reader may not read (another
// org's, another user's private ones): they must not count in the
// statistics. The reader's own narrowing (Visibility here) keeps them out
// of the results without changing any statistic.
func TestKeywordScoresEqualFTS5(t *testing.T) {
	tenant := graph.Scope{TenantID: "t"}
	o1, o2 := graph.Scope{TenantID: "t", OrgID: "o1"}, graph.Scope{TenantID: "t", OrgID: "o2"}
	for _, tc := range []struct {
		name  string
		f     graph.Filter
		place func(i int, m *graph.Memory) // scope, owner and visibility of corpus memory i
		// rewrite gives every 4th memory a new version (another memory's
		// text) after the first search built the index: the old version's
		// terms leave the document frequencies.
		rewrite bool
	}{
		{"OneScope", graph.Filter{Scope: tenant, Reader: graph.System}, func(int, *graph.Memory) {}, false},
		{"AdmittedOnly", graph.Filter{Scope: o1, Reader: graph.Reader{UserID: "u1"},
			Visibility: []graph.Visibility{graph.VisibilityUser, graph.VisibilityProject}},
			func(i int, m *graph.Memory) {
				m.Scope, m.UserID, m.Visibility = o1, "u1", graph.VisibilityProject
				switch i % 6 {
				case 0:
					m.UserID, m.Visibility = "u2", graph.VisibilitySession // u2's: not u1's to read
				case 1:
					m.Visibility = graph.VisibilityUser // u1's own
				case 2:
					m.Scope = tenant // above the reader's scope
				case 3:
					m.Scope = o2 // another org
				}
			}, false},
		{"Rewritten", graph.Filter{Scope: tenant, Reader: graph.System}, func(int, *graph.Memory) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, t.TempDir())
			c := storetest.Corpus(tenant, 7, 1500)
			// Give the pseudo-words English endings, so stems merge some of them.
			for i := range c.Inputs {
				c.Inputs[i].Version.Content = strings.NewReplacer(" ", "ing ").Replace(c.Inputs[i].Version.Content)
				tc.place(i, &c.Inputs[i].Memory)
			}
			created, err := s.CreateMemories(t.Context(), c.Inputs)
			require.NoError(t, err)
			content := make([]string, len(c.Inputs))
			for i, in := range c.Inputs {
				content[i] = in.Version.Content
			}
			if tc.rewrite {
				_, err := s.KeywordSearch(t.Context(), tc.f, c.KeywordQueries(1)[0], 1) // the index holds the first versions
				require.NoError(t, err)
				for i := 3; i < len(content); i += 4 {
					content[i] = c.Inputs[(i*7)%len(content)].Version.Content
					_, err := s.AddVersion(t.Context(), created[i].Memory.Scope, created[i].Memory.ID, graph.VersionInput{Content: content[i]})
					require.NoError(t, err)
				}
			}

			ref, err := sql.Open("sqlite", ":memory:")
			require.NoError(t, err)
			defer ref.Close()
			ref.SetMaxOpenConns(1)
			_, err = ref.Exec(`CREATE VIRTUAL TABLE f USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');
				INSERT INTO f (f, rank) VALUES ('rank', 'bm25(2.0, 1.0)')`)
			require.NoError(t, err)
			admitted := 0
			for i, in := range c.Inputs {
				if !tc.f.Admits(created[i].Memory) {
					continue
				}
				admitted++
				_, err := ref.Exec(`INSERT INTO f (rowid, title, body) VALUES (?, ?, ?)`, i,
					strings.Join(bm25.Terms(in.Memory.Title), " "), strings.Join(bm25.Terms(content[i]), " "))
				require.NoError(t, err)
			}
			require.Greater(t, admitted, 500, "the reader's statistics are over many memories")
			compared := 0
			for _, q := range c.KeywordQueries(40) {
				got, err := s.KeywordSearch(t.Context(), tc.f, q, 20)
				require.NoError(t, err)
				match := `"` + strings.Join(bm25.Terms(q), `" OR "`) + `"`
				rows, err := ref.Query(`SELECT rowid, -rank FROM f WHERE f MATCH ? ORDER BY rank LIMIT 20`, match)
				require.NoError(t, err)
				want := map[string]float64{}
				var wantScores []float64
				for rows.Next() {
					var (
						i     int
						score float64
					)
					require.NoError(t, rows.Scan(&i, &score))
					want[created[i].Memory.ID] = score
					wantScores = append(wantScores, score)
				}
				require.NoError(t, rows.Err())
				require.Len(t, got, len(wantScores), "%q: hit count", q)
				compared += len(got)
				for k, h := range got {
					assert.InEpsilon(t, wantScores[k], h.Score, 1e-9, "%q: score at rank %d", q, k)
					if w, ok := want[h.Memory.ID]; ok {
						assert.InEpsilon(t, w, h.Score, 1e-9, "%q: score of %s", q, h.Memory.ID)
					}
				}
			}
			require.Greater(t, compared, 400, "the queries must find something to compare")
		})
	}
}

// TestKeywordIndexFollowsWrites: the index answers from the tables as they
// are, whoever wrote them: a new version replaces a memory's terms, and a
// second Store on the same file (another process, in effect) sees the first
// one's writes on its next search.
func TestKeywordIndexFollowsWrites(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	scope := graph.Scope{TenantID: "t"}
	f := graph.Filter{Scope: scope, Reader: graph.System}
	ids := func(s graph.Store, q string) []string {
		t.Helper()
		got, err := s.KeywordSearch(t.Context(), f, q, 10)
		require.NoError(t, err)
		return scoredIDsOf(got)
	}
	assert.Empty(t, ids(b, "zebra"), "empty store")

	in := graph.MemoryInput{Memory: graph.Memory{Scope: scope, Type: "note", Title: "zoo"},
		Version: graph.VersionInput{Content: "the zebra sleeps"}}
	cr, err := graphtest.CreateMemory(t.Context(), a, in)
	require.NoError(t, err)
	assert.Equal(t, []string{cr.Memory.ID}, ids(a, "zebra"), "writer sees its write")
	assert.Equal(t, []string{cr.Memory.ID}, ids(b, "zebra"), "another store on the file sees it")

	_, err = a.AddVersion(t.Context(), scope, cr.Memory.ID, graph.VersionInput{Content: "the yak grazes"})
	require.NoError(t, err)
	for name, s := range map[string]graph.Store{"writer": a, "other": b} {
		assert.Empty(t, ids(s, "zebra"), "%s: the old version's terms are gone", name)
		assert.Equal(t, []string{cr.Memory.ID}, ids(s, "yak"), "%s: the new version's terms match", name)
		assert.Equal(t, []string{cr.Memory.ID}, ids(s, "zoo"), "%s: the title still matches", name)
	}

	// Many rewrites: dead postings outnumber live ones and are compacted
	// away; results stay right.
	var batch []graph.MemoryInput
	for i := range 600 {
		batch = append(batch, graph.MemoryInput{Memory: graph.Memory{Scope: scope, Type: "note", Title: fmt.Sprintf("m%d", i)},
			Version: graph.VersionInput{Content: "round0 filler"}})
	}
	cs, err := a.CreateMemories(t.Context(), batch)
	require.NoError(t, err)
	for round := 1; round <= 3; round++ {
		for _, c := range cs {
			_, err := a.AddVersion(t.Context(), scope, c.Memory.ID, graph.VersionInput{Content: fmt.Sprintf("round%d filler", round)})
			require.NoError(t, err)
		}
		if round == 1 {
			assert.Len(t, ids(b, "round1"), 10, "round 1 visible")
		}
	}
	assert.Empty(t, ids(b, "round0 round1 round2"), "old rounds gone after compaction")
	got, err := b.KeywordSearch(t.Context(), f, "round3", 1000)
	require.NoError(t, err)
	assert.Len(t, got, 600, "every memory found by its current text")
}

func scoredIDsOf(ss []graph.Scored) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Memory.ID
	}
	return out
}

func TestWarmKeywordIndex(t *testing.T) {
	s := open(t, t.TempDir())
	scope := graph.Scope{TenantID: "t"}
	_, err := s.CreateMemories(t.Context(), storetest.Corpus(scope, 3, 200).Inputs)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.WarmKeywordIndex(cancelled), context.Canceled)
	require.NoError(t, s.WarmKeywordIndex(t.Context()))
	got, err := s.KeywordSearch(t.Context(), graph.Filter{Scope: scope, Reader: graph.System}, storetest.Corpus(scope, 3, 200).KeywordQueries(1)[0], 5)
	require.NoError(t, err)
	assert.NotEmpty(t, got)
}

// TestReadsNeverWaitOnASecondConnection: with one reader connection and
// many concurrent searches, no read may hold its transaction while it waits
// for another connection (preparing a statement, a second transaction), or
// the pool deadlocks.
func TestReadsNeverWaitOnASecondConnection(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{Readers: 1})
	require.NoError(t, err)
	defer s.Close()
	scope := graph.Scope{TenantID: "t"}
	c := storetest.Corpus(scope, 5, 500)
	created, err := s.CreateMemories(t.Context(), c.Inputs)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	f := graph.Filter{Scope: scope, Reader: graph.System}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			// Each goroutine's filter differs, so statements are prepared
			// while others hold the connection.
			g := f
			g.Types = []string{fmt.Sprintf("type%d", i%4), "note"}
			if _, err := s.KeywordSearch(ctx, g, c.KeywordQueries(16)[i], 20); err != nil {
				t.Errorf("keyword %d: %v", i, err)
			}
			seeds := []string{created[i].Memory.ID, created[i+16].Memory.ID}
			if _, err := s.Neighbours(ctx, g, seeds, 5); err != nil {
				t.Errorf("neighbours %d: %v", i, err)
			}
			if _, err := s.Candidates(ctx, g, c.EntityQueries(16)[i], 10); err != nil {
				t.Errorf("candidates %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "reads deadlocked on the connection pool")
}
