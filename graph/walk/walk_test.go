package walk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestRankMultiHop: the question names the song; the passage about the song
// names its performer; the passage about the performer is two hops away and
// is found, ahead of a passage that shares only a common entity.
func TestRankMultiHop(t *testing.T) {
	g := New()
	g.Mention("song", "blue moon")
	g.Mention("song", "ella")
	g.Mention("singer", "ella")
	g.Mention("singer", "spouse")
	g.Mention("other", "music")
	g.Mention("song", "music")
	g.DF("music", 400)
	g.Memory("isolated")
	rs := g.Rank(graph.WalkRequest{Entities: map[string]float64{"blue moon": 1}})
	require.NotEmpty(t, rs)
	assert.Equal(t, []string{"song", "singer", "other"}, ids(rs))
	assert.Equal(t, []string{"blue moon", "ella", "music"}, rs[0].Via)
	assert.Equal(t, []string{"ella", "spouse"}, rs[1].Via)
}

func TestRankSeedsAndBounds(t *testing.T) {
	g := New()
	g.Mention("a", "x")
	g.Mention("b", "x")
	g.Mention("c", "y")
	g.Link("c", "d", 1)
	tests := []struct {
		name string
		r    graph.WalkRequest
		want []string
	}{
		{"no seed in the graph", graph.WalkRequest{Entities: map[string]float64{"zz": 1}}, nil},
		// c holds what the seed d sends it; d what comes back from c.
		{"memory seed walks its link", graph.WalkRequest{Memories: map[string]float64{"d": 1}}, []string{"c", "d"}},
		{"limit", graph.WalkRequest{Entities: map[string]float64{"x": 1}, Limit: 1}, []string{"a"}},
		{"zero weight is no seed", graph.WalkRequest{Entities: map[string]float64{"x": 0}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := g.Rank(tt.r)
			if tt.want == nil {
				assert.Empty(t, rs)
				return
			}
			assert.Equal(t, tt.want, ids(rs))
		})
	}
}

// TestRankScoresWhatTheGraphAdds: a memory with no edge has no score, seed
// or not; nor has one no path reaches.
func TestRankScoresWhatTheGraphAdds(t *testing.T) {
	g := New()
	for _, m := range []struct{ id, e string }{{"a", "x"}, {"a", "y"}, {"b", "y"}, {"c", "z"}} {
		g.Mention(m.id, m.e)
	}
	g.Memory("lone")
	rs := g.Rank(graph.WalkRequest{Memories: map[string]float64{"a": 1, "lone": 1}})
	for _, r := range rs {
		assert.Greater(t, r.Score, 0.0)
	}
	assert.ElementsMatch(t, []string{"a", "b"}, ids(rs))
}

// TestRankWithoutTheRestart: a seed memory is not ahead for being a seed.
// s and m share their one entity, so the walk sends each the same mass
// over its edge; the restart mass s also holds is its seed weight, the
// other signals' (they tie, ordered by id).
func TestRankWithoutTheRestart(t *testing.T) {
	g := New()
	g.Mention("s", "e")
	g.Mention("m", "e")
	rs := g.Rank(graph.WalkRequest{Memories: map[string]float64{"s": 1}})
	require.Len(t, rs, 2)
	assert.Equal(t, []string{"m", "s"}, ids(rs))
	assert.InDelta(t, rs[0].Score, rs[1].Score, 1e-12)
}

// TestRankPerDegree: a memory does not win for mentioning more entities.
// a and b are both one edge from the seed entity x; b also mentions five
// entities of its own, which hand back to b what they got from it, so its
// PageRank is higher, but per unit of its edge weight it is further from
// the seed than a, whose every edge leads to x.
func TestRankPerDegree(t *testing.T) {
	g := New()
	g.Mention("a", "x")
	g.Mention("b", "x")
	for _, e := range []string{"y1", "y2", "y3", "y4", "y5"} {
		g.Mention("b", e)
	}
	rs := g.Rank(graph.WalkRequest{Entities: map[string]float64{"x": 1}})
	assert.Equal(t, []string{"a", "b"}, ids(rs))
}

// TestRankReproducible: the same neighbourhood and seeds score alike to
// the last bit on every call, whatever order the seed maps iterate in
// (seed weights whose sum depends on the order of addition).
func TestRankReproducible(t *testing.T) {
	build := func() *Graph {
		g := New()
		for i, m := range []string{"m1", "m2", "m3", "m4", "m5", "m6"} {
			g.Mention(m, []string{"a", "b", "c"}[i%3])
			g.Mention(m, []string{"d", "e"}[i%2])
		}
		g.Link("m1", "m4", NextWeight)
		return g
	}
	r := graph.WalkRequest{Entities: map[string]float64{"a": 0.1, "b": 1.0 / 3, "c": 0.7, "d": 1e-3},
		Memories: map[string]float64{"m1": 1, "m2": 0.5, "m3": 1.0 / 3, "m5": 0.25, "m6": 0.2}, Limit: 10}
	want := build().Rank(r)
	require.NotEmpty(t, want)
	for range 50 {
		assert.Equal(t, want, build().Rank(r))
	}
}

// TestRankSeedAlone: a seed memory whose entities nothing else here
// mentions gets back only what it sent, and is not scored; one entity
// shared, an entity seed, or a link relates it, and it is.
func TestRankSeedAlone(t *testing.T) {
	tests := []struct {
		name  string
		build func(g *Graph)
		r     graph.WalkRequest
		want  []string
	}{
		{"its entities are its own", func(g *Graph) {
			g.Mention("s", "x")
			g.Mention("s", "y")
			g.Mention("a", "z")
			g.Mention("b", "z")
		}, graph.WalkRequest{Memories: map[string]float64{"s": 1, "a": 1}}, []string{"a", "b"}},
		{"one entity shared", func(g *Graph) {
			g.Mention("s", "x")
			g.Mention("s", "y")
			g.Mention("m", "y")
		}, graph.WalkRequest{Memories: map[string]float64{"s": 1}}, []string{"m", "s"}},
		{"its entity is a seed", func(g *Graph) {
			g.Mention("s", "x")
		}, graph.WalkRequest{Entities: map[string]float64{"x": 1}, Memories: map[string]float64{"s": 1}}, []string{"s"}},
		{"a link", func(g *Graph) {
			g.Mention("s", "x")
			g.Mention("m", "w")
			g.Link("s", "m", NextWeight)
		}, graph.WalkRequest{Memories: map[string]float64{"s": 1}}, []string{"m", "s"}},
		{"not a seed: reached over a shared entity", func(g *Graph) {
			g.Mention("s", "x")
			g.Mention("m", "x")
			g.Mention("m", "own")
		}, graph.WalkRequest{Memories: map[string]float64{"s": 1}}, []string{"s", "m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			tt.build(g)
			assert.ElementsMatch(t, tt.want, ids(g.Rank(tt.r)))
		})
	}
}
