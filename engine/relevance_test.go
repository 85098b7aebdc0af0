package engine

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

func TestRelevanceOf(t *testing.T) {
	w := 0.2
	c := policy.Relevance{CosineMid: 0.6, CosineWidth: 0.05, CoverageWeight: &w}
	assert.InDelta(t, 0.5, relevanceOf(c, 0.6, 0), 1e-9)
	assert.InDelta(t, 0.881, relevanceOf(c, 0.7, 0), 1e-3, "two widths above the mid")
	assert.InDelta(t, 0.119, relevanceOf(c, 0.5, 0), 1e-3, "two widths below")
	assert.InDelta(t, 0.5, relevanceOf(c, 0.5, 0.5), 1e-9, "half the query's terms add 0.1 to the cosine")
	assert.Greater(t, relevanceOf(c, 1, 0), 0.999)
	assert.Less(t, relevanceOf(c, 0, 0), 1e-5)
	c.CoverageWeight = nil
	assert.InDelta(t, relevanceOf(c, 0.6+policy.DefaultCoverageWeight, 0), relevanceOf(c, 0.6, 1), 1e-9, "the default weight")
}

func TestCoverage(t *testing.T) {
	terms := []string{"orca", "pod", "travel"}
	assert.InDelta(t, 1, coverage(terms, "The orca pods travelled", bm25.Stem), 1e-9, "stems match")
	assert.InDelta(t, 1.0/3, coverage(terms, "an orca, an orca", bm25.Stem), 1e-9, "a term counts once")
	assert.Zero(t, coverage(terms, "nothing here", bm25.Stem))
	assert.Zero(t, coverage(nil, "orca", bm25.Stem))
}

// TestAbstentionIsAbsolute searches memories whose cosine to each query the
// test sets (tableEmbedder), in the default hybrid mode with the policy's
// calibration and a threshold of 0.5. What abstention used to compare was
// the fused score, relative to the other hits: a lone exact match scored
// 0.5 and an off-topic query's best hit up to 0.9. Now a result's
// confidence is its relevance, the calibrated cosine, whatever else the
// query found.
//
//	memory    text                           cosine to "exact"  to "offtopic"
//	lone      (tenant t1, alone)             1                  -
//	near      (tenant t2)                    -                  0.30
//	far-NN    (tenant t2) x5                 -                  0.10
func TestDateWordsCoverTheQuerysDate(t *testing.T) {
	oct := time.Date(2023, 10, 3, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		mem  graph.Memory
		want string
	}{
		{"created", graph.Memory{CreatedAt: oct}, "3 October 2023"},
		{"valid from wins", graph.Memory{CreatedAt: oct, ValidFrom: time.Date(2021, 5, 1, 0, 0, 0, 0, time.UTC)}, "1 May 2021"},
		{"no date", graph.Memory{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, dateWords(tt.mem))
		})
	}
	terms := bm25.QueryTerms(keywordQuery("What setback did Melanie face in October 2023?"))
	text := "Melanie: I had a setback, I hurt myself and had to face a break from pottery."
	assert.Less(t, coverage(terms, text, bm25.Stem), 1.0, "the text alone does not say when")
	assert.InDelta(t, 1, coverage(terms, text+"\n"+dateWords(graph.Memory{CreatedAt: oct}), bm25.Stem), 1e-9, "its date does")
}

func TestAbstentionIsAbsolute(t *testing.T) {
	ctx := context.Background()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	pol.Retrieval.AbstentionThreshold = 0.5
	cal := pol.Retrieval.Relevance
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	const exact, offtopic = "where did the orca pod travel", "quarterly tax filing deadline"
	e, err := New(Options{Store: st, Index: idx, Embedder: tableEmbedder{exact: axis(1, 0), offtopic: axis(1, 0), "quarterly tax report": axis(1, 0), "zqfrzhnhzfwh": axis(1, 0)}, Policy: holder})
	require.NoError(t, err)

	// Both queries embed to e_0 (the tenants keep them apart); cosTo
	// returns a unit vector whose cosine to e_0 is c.
	cosTo := func(c float64) []float32 {
		v := make([]float32, vecDim)
		v[0], v[vecDim-1] = float32(c), float32(math.Sqrt(max(0, 1-c*c)))
		return v
	}
	at := time.Now().UTC().Add(-time.Hour)
	type fx struct {
		tenant, text string
		vec          []float32
	}
	fixture := []fx{
		{"t1", "The orca pod travelled north past the island", cosTo(1)},
		{"t2", "quarterly report on the salmon run", cosTo(0.30)},
		{"t3", "ticket zqfrzhnhzfwh is closed", cosTo(0.10)},
	}
	for range 5 {
		fixture = append(fixture, fx{"t2", "notes about the harbour", cosTo(0.10)})
	}
	in := make([]graph.MemoryInput, len(fixture))
	for i, f := range fixture {
		in[i] = graph.MemoryInput{
			Memory:  graph.Memory{Scope: graph.Scope{TenantID: f.tenant}, Type: "note", CreatedAt: at.Add(time.Duration(i) * time.Second)},
			Version: graph.VersionInput{Content: f.text},
		}
	}
	created, err := st.CreateMemories(ctx, in)
	require.NoError(t, err)
	pts := make([]vector.Point, len(created))
	for i, c := range created {
		pts[i] = point(c.Memory, c.Version.ID, fixture[i].vec)
	}
	require.NoError(t, idx.Upsert(ctx, pts))
	search := func(tenant, query string) SearchResponse {
		t.Helper()
		p := graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: tenant}}
		resp, err := e.Search(ctx, p, SearchRequest{Query: query})
		require.NoError(t, err)
		return resp
	}

	lone := search("t1", exact)
	assert.False(t, lone.Abstained, "a lone exact match is answered")
	require.Len(t, lone.Results, 1)
	assert.InDelta(t, relevanceOf(cal, 1, 1), lone.Results[0].Confidence, 1e-6, "its confidence is its calibrated cosine, every query term found")
	assert.Greater(t, lone.Results[0].Confidence, 0.99)

	off := search("t2", offtopic)
	assert.True(t, off.Abstained, "no memory is near the off-topic query, however they rank among themselves")
	assert.Empty(t, off.Results)
	assert.Contains(t, off.Message, "abstention threshold 0.50")

	// Keyword mode runs no vector signal: the query is embedded for the
	// relevance all the same, so it abstains alike.
	p := graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t2"}}
	kw, err := e.Search(ctx, p, SearchRequest{Query: "quarterly tax report", Mode: policy.ModeKeyword})
	require.NoError(t, err)
	assert.True(t, kw.Abstained, "the keyword match is 0.30 from the query by cosine and lacks a term")

	// A word the embedder cannot judge (an id, a code): the memory holding
	// every term of the query answers, at the threshold, however low the
	// cosine — in every mode.
	for _, mode := range []string{policy.ModeHybrid, policy.ModeKeyword} {
		id, err := e.Search(ctx, graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t3"}},
			SearchRequest{Query: "zqfrzhnhzfwh", Mode: mode})
		require.NoError(t, err)
		assert.False(t, id.Abstained, "an exact match never abstains (%s)", mode)
		require.NotEmpty(t, id.Results, mode)
		assert.InDelta(t, 0.5, id.Results[0].Confidence, 1e-6, mode)
	}

	// The same off-topic query without a threshold: the vector hits are
	// below the floor (cosines 0.30 and 0.10: vectorFloor), so what is left
	// is the keyword match, with its own calibrated cosine as confidence,
	// far below the 0.9 its fused score would say.
	pol.Retrieval.AbstentionThreshold = 0
	require.NoError(t, holder.Reload(func() (*policy.Policy, error) { return pol, nil }))
	all := search("t2", offtopic)
	require.Len(t, all.Results, 1)
	r := all.Results[0]
	assert.Equal(t, "quarterly report on the salmon run", r.Content)
	assert.NotContains(t, r.Signals, signalVector, "0.30 from the query: no vector match")
	cov := coverage(bm25.QueryTerms(keywordQuery(offtopic)), r.Content, bm25.Stem)
	assert.InDelta(t, relevanceOf(cal, 0.30, cov), r.Confidence, 1e-6)
	assert.Less(t, r.Confidence, 0.01)
}

// TestVectorFloor: the nearest neighbours of a query are whatever the
// index holds nearest; in a small store they are strangers. A vector hit
// whose calibrated relevance stays below vectorFloorRelevance even with
// every query term (cosine < 0.416 under the default calibration) is no
// match: it is not a candidate, seeds no walk, and reaches neither the
// results nor read_context. A hit above the floor still is one.
func TestVectorFloor(t *testing.T) {
	ctx := context.Background()
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	assert.InDelta(t, 0.416, vectorFloor(pol.Retrieval.Relevance), 1e-3)
	assert.InDelta(t, vectorFloorRelevance, relevanceOf(pol.Retrieval.Relevance, vectorFloor(pol.Retrieval.Relevance), 1), 1e-9)

	const query = "which editor theme do I prefer"
	cosTo := func(c float64) []float32 {
		v := make([]float32, vecDim)
		v[0], v[vecDim-1] = float32(c), float32(math.Sqrt(max(0, 1-c*c)))
		return v
	}
	for _, tt := range []struct {
		name     string
		cosine   float64 // of the stranger
		stranger bool    // whether it is returned
	}{
		{"below the floor", 0.29, false},
		{"just below", 0.41, false},
		{"above the floor", 0.45, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := graphtest.Open(t)
			holder, err := policy.NewHolder(pol)
			require.NoError(t, err)
			idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
			require.NoError(t, err)
			t.Cleanup(func() { _ = idx.Close() })
			e, err := New(Options{Store: st, Index: idx, Embedder: tableEmbedder{query: axis(1, 0)}, Policy: holder})
			require.NoError(t, err)
			at := time.Now().UTC().Add(-time.Hour)
			// No entity in common: only the vector signal could bring the
			// stranger (the walk reaches what shares an entity with its
			// seeds, whatever the floor: a relationship_path).
			texts := []string{"Alice prefers dark mode in every editor theme.", "Bob drinks his coffee black."}
			vecs := [][]float32{cosTo(0.9), cosTo(tt.cosine)}
			in := make([]graph.MemoryInput, len(texts))
			for i, text := range texts {
				in[i] = graph.MemoryInput{
					Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", CreatedAt: at.Add(time.Duration(i) * time.Second)},
					Version: graph.VersionInput{Content: text},
				}
			}
			created, err := st.CreateMemories(ctx, in)
			require.NoError(t, err)
			pts := make([]vector.Point, len(created))
			for i, c := range created {
				pts[i] = point(c.Memory, c.Version.ID, vecs[i])
			}
			require.NoError(t, idx.Upsert(ctx, pts))
			p := graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t1"}}

			resp, err := e.Search(ctx, p, SearchRequest{Query: query})
			require.NoError(t, err)
			var got []string
			for _, r := range resp.Results {
				got = append(got, r.Content)
			}
			c, err := e.ReadContext(ctx, p, ContextRequest{Query: query})
			require.NoError(t, err)
			var items []string
			for _, it := range c.Items {
				items = append(items, it.Content)
			}
			want := texts[:1]
			if tt.stranger {
				want = texts
			}
			assert.ElementsMatch(t, want, got, "search")
			assert.ElementsMatch(t, want, items, "read_context")
		})
	}
}

// TestRelevanceScoresHitsOutsideTheVectorPool checks that a hit the vector
// signal did not return (a keyword or graph hit) gets its cosine from
// Index.Score, and that without vectors its relevance is the keyword
// coverage of the query. Both load the hit's version.
func TestRelevanceScoresHitsOutsideTheVectorPool(t *testing.T) {
	ctx := context.Background()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	e, err := New(Options{Store: st, Index: idx, Embedder: tableEmbedder{}, Policy: holder})
	require.NoError(t, err)
	created, err := st.CreateMemories(ctx, []graph.MemoryInput{{
		Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", CreatedAt: time.Now().UTC()},
		Version: graph.VersionInput{Content: "the orca pod travelled north"},
	}})
	require.NoError(t, err)
	m := created[0]
	require.NoError(t, idx.Upsert(ctx, []vector.Point{point(m.Memory, m.Version.ID, axis(1, 1))}))
	q := searchPlan{f: graph.Filter{Scope: graph.Scope{TenantID: "t1"}, Reader: graph.System, Statuses: []graph.Status{graph.StatusActive}},
		text: "where did the orca pod go", rt: pol.Retrieval}

	h := &hit{mem: m.Memory, loaded: true}
	h.setRank(signalKeyword, 1, 3.2)
	require.NoError(t, e.scoreRelevance(ctx, q, axis(1, 0), nil, []*hit{h}))
	require.True(t, h.hasCosine)
	assert.InDelta(t, 0.7071, h.cosine, 1e-3, "scored by the index: cos(e0, e0+e1)")
	assert.InDelta(t, relevanceOf(pol.Retrieval.Relevance, h.cosine, 2.0/3), h.relevance, 1e-9, "orca and pod of orca, pod, go")

	kw := &hit{mem: m.Memory, loaded: true}
	kw.setRank(signalKeyword, 1, 3.2)
	require.NoError(t, e.scoreRelevance(ctx, q, nil, nil, []*hit{kw}))
	assert.False(t, kw.hasCosine)
	assert.InDelta(t, 2.0/3, kw.relevance, 1e-9, "orca and pod of orca, pod, go")
}

// TestRelevanceOfADatedQuery: a query's calendar dates are judged against
// the memory's date, not its words. The memory of a flood, written on 7 July
// 2023, is far (cos 0.55) from the whole question, which the date pulls
// away, and near (0.96) from the question without it: search answers, with
// the better cosine as the relevance, where judging the whole question
// alone abstained. The question without its date is embedded in the same
// call as the question (tableEmbedder fails on any other text), and an
// undated question as far as the dated one still abstains.
func TestRelevanceOfADatedQuery(t *testing.T) {
	ctx := context.Background()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	pol.Retrieval.AbstentionThreshold = 0.5
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	const (
		dated   = "What natural disaster hit the old area on 7 July, 2023?"
		content = "What natural disaster hit the old area?"
		undated = "What natural disaster hit the old area lately?"
	)
	far, near := axis(2, 1.5), axis(2, 0.3) // cos to e0: 0.555 and 0.958
	e, err := New(Options{Store: st, Index: idx, Embedder: tableEmbedder{dated: far, content: near, undated: far}, Policy: holder})
	require.NoError(t, err)
	created, err := st.CreateMemories(ctx, []graph.MemoryInput{{
		Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", CreatedAt: time.Date(2023, 7, 7, 18, 29, 0, 0, time.UTC)},
		Version: graph.VersionInput{Content: "John: my old neighbourhood was hit by a nasty flood last week"},
	}})
	require.NoError(t, err)
	m := created[0]
	require.NoError(t, idx.Upsert(ctx, []vector.Point{point(m.Memory, m.Version.ID, axis(1, 0))}))
	p := graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t1"}}

	for _, mode := range []string{policy.ModeHybrid, policy.ModeKeyword} {
		resp, err := e.Search(ctx, p, SearchRequest{Query: dated, Mode: mode})
		require.NoError(t, err)
		require.False(t, resp.Abstained, mode)
		require.Len(t, resp.Results, 1, mode)
		terms := bm25.QueryTerms(keywordQuery(dated))
		cov := coverage(terms, resp.Results[0].Content+"\n"+dateWords(m.Memory), bm25.Stem)
		assert.InDelta(t, relevanceOf(pol.Retrieval.Relevance, 0.958, cov), resp.Results[0].Confidence, 1e-3,
			"%s: the cosine of the question without its date, the date covered by the memory's", mode)
	}
	resp, err := e.Search(ctx, p, SearchRequest{Query: undated})
	require.NoError(t, err)
	assert.True(t, resp.Abstained, "the same distance without a date to set aside")
}

// namedEmbedder is tableEmbedder under another model id.
type namedEmbedder struct {
	tableEmbedder
	id string
}

func (e namedEmbedder) ModelID() string { return e.id }

// calibrationEngine is an engine on embedder model under the default
// policy, its cosine_mid moved to mid unless mid is 0, and the log it
// writes.
func calibrationEngine(t *testing.T, model string, mid float64) (*Engine, *strings.Builder) {
	t.Helper()
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	if mid != 0 {
		pol.Retrieval.Relevance.CosineMid = mid
	}
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	log := &strings.Builder{}
	e, err := New(Options{Store: graphtest.Open(t), Index: idx, Embedder: namedEmbedder{id: model}, Policy: holder,
		Logger: slog.New(slog.NewTextHandler(log, nil))})
	require.NoError(t, err)
	return e, log
}

// TestWarnUncalibrated: an engine whose embedder is not the model the
// default relevance calibration was fitted on, under that calibration,
// says so in its log; the model itself, or a calibration of its own, does
// not.
func TestWarnUncalibrated(t *testing.T) {
	for _, tt := range []struct {
		name  string
		model string
		mid   float64 // 0: the default
		warn  bool
	}{
		{"another model, the default calibration", "intfloat/e5-small-v2", 0, true},
		{"the calibrated model", "BAAI/bge-small-en-v1.5@onnx-int8-dynamic-fused", 0, false},
		{"another model, its own calibration", "intfloat/e5-small-v2", 0.8, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, log := calibrationEngine(t, tt.model, tt.mid)
			assert.Equal(t, tt.warn, strings.Contains(log.String(), "relevance calibration is the default"), log.String())
			if tt.warn {
				assert.Contains(t, log.String(), "model=intfloat/e5-small-v2")
			}
		})
	}
	// A reload that brings the default calibration back says so too.
	t.Run("reloaded to the default calibration", func(t *testing.T) {
		e, log := calibrationEngine(t, "intfloat/e5-small-v2", 0.8)
		require.NotContains(t, log.String(), "relevance calibration is the default")
		_, err := e.ReloadPolicy(t.Context(), graph.Principal{ID: "op", Roles: []string{"operator"}, Scope: graph.Scope{TenantID: "t1"}}, func() (*policy.Policy, error) {
			return policy.Parse("default_policy.yaml", config.DefaultPolicy())
		})
		require.NoError(t, err)
		assert.Contains(t, log.String(), "relevance calibration is the default")
	})
}
