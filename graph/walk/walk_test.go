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
		{"memory seed walks its link", graph.WalkRequest{Memories: map[string]float64{"d": 1}}, []string{"d", "c"}},
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

// TestRankIsADistribution: the scores of every node sum to 1, so memory
// scores are comparable across queries of one neighbourhood.
func TestRankIsADistribution(t *testing.T) {
	g := New()
	for _, m := range []struct{ id, e string }{{"a", "x"}, {"a", "y"}, {"b", "y"}, {"c", "z"}} {
		g.Mention(m.id, m.e)
	}
	g.Memory("lone")
	rs := g.Rank(graph.WalkRequest{Memories: map[string]float64{"a": 1, "lone": 1}})
	var sum float64
	for _, r := range rs {
		sum += r.Score
		assert.Greater(t, r.Score, 0.0)
	}
	assert.Less(t, sum, 1.0) // the rest sits on entities
	assert.NotContains(t, ids(rs), "c")
	assert.Contains(t, ids(rs), "lone")
}
