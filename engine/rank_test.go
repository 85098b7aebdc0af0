package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

func mem(id string, minute int) *graph.Memory {
	return &graph.Memory{ID: id, CreatedAt: time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC), Importance: 0.5}
}

func ids(hs []*hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.mem.ID
	}
	return out
}

func TestFuse(t *testing.T) {
	tests := []struct {
		name    string
		method  string // policy.FusionRRF when empty
		weights map[string]float64
		add     func(p *pool)
		want    []string
		top     float64 // normalised score of the first hit
	}{
		{
			name: "agreement beats one strong signal",
			add: func(p *pool) {
				p.add(signalGraph, 1, "a", mem("a", 1), 1)
				p.add(signalGraph, 2, "b", mem("b", 2), 1)
				p.add(signalKeyword, 1, "b", mem("b", 2), 9)
				p.add(signalKeyword, 2, "c", mem("c", 3), 8)
			},
			want: []string{"b", "a", "c"},
			top:  (1.0/62 + 1.0/61) / (2.0 / 61),
		},
		{
			name:    "weights decide between signals",
			weights: map[string]float64{signalGraph: 0.1, signalKeyword: 2},
			add: func(p *pool) {
				p.add(signalGraph, 1, "a", mem("a", 1), 1)
				p.add(signalKeyword, 1, "c", mem("c", 3), 8)
			},
			want: []string{"c", "a"},
			top:  2.0 / 61 / (2.1 / 61),
		},
		{
			name: "ties: newest first",
			add: func(p *pool) {
				p.add(signalGraph, 1, "old", mem("old", 1), 1)
				p.add(signalKeyword, 1, "new", mem("new", 9), 1)
			},
			want: []string{"new", "old"},
			top:  0.5,
		},
		{
			name: "best rank of a signal counts once",
			add: func(p *pool) {
				p.add(signalGraph, 3, "a", mem("a", 1), 1)
				p.add(signalGraph, 1, "a", mem("a", 1), 1)
			},
			want: []string{"a"},
			top:  1,
		},
		{
			method: policy.FusionScore,
			name:   "scores, not ranks: a close second keeps its margin",
			add: func(p *pool) {
				p.add(signalKeyword, 1, "a", mem("a", 1), 10)
				p.add(signalKeyword, 2, "b", mem("b", 2), 9.9)
				p.add(signalKeyword, 3, "c", mem("c", 3), 0)
				p.add(signalVector, 1, "b", mem("b", 2), 0.8)
				p.add(signalVector, 2, "c", mem("c", 3), 0.7)
				p.add(signalVector, 3, "a", mem("a", 1), 0.2)
			},
			want: []string{"b", "a", "c"}, // b: 0.99 + 1; a: 1 + 0; c: 0 + 0.83
			top:  (0.99 + 1) / 2,
		},
		{
			method:  policy.FusionScore,
			name:    "weights scale each signal",
			weights: map[string]float64{signalKeyword: 1, signalVector: 0.1},
			add: func(p *pool) {
				p.add(signalKeyword, 1, "a", mem("a", 1), 5)
				p.add(signalKeyword, 2, "b", mem("b", 2), 1)
				p.add(signalVector, 1, "b", mem("b", 2), 0.9)
				p.add(signalVector, 2, "a", mem("a", 1), 0.1)
			},
			want: []string{"a", "b"},
			top:  1 / 1.1,
		},
		{
			method: policy.FusionScore,
			name:   "one hit per signal normalises to 1",
			add: func(p *pool) {
				p.add(signalKeyword, 1, "a", mem("a", 1), 3)
			},
			want: []string{"a"},
			top:  1,
		},
		{
			method: policy.FusionZScore,
			name:   "z-scores: agreement beats one signal's outlier",
			add: func(p *pool) {
				for i, v := range []float64{10, 1, 1, 1} { // a is keyword's outlier
					id := string(rune('a' + i))
					p.add(signalKeyword, i+1, id, mem(id, i), v)
				}
				for i, x := range []struct {
					id string
					v  float64
				}{{"b", 0.9}, {"c", 0.8}, {"d", 0.7}, {"a", 0.1}} {
					p.add(signalVector, i+1, x.id, mem(x.id, 0), x.v)
				}
			},
			want: []string{"b", "a", "c", "d"}, // sums of z: b 0.307, a 0.045, c -0.015, d -0.336
			// b: keyword z (1-3.25)/sd(10,1,1,1) plus vector z (0.9-0.625)/sd(0.9,0.8,0.7,0.1), over 2 weights
			top: 1 / (1 + math.Exp(-((1-3.25)/math.Sqrt(15.1875)+(0.9-0.625)/math.Sqrt(0.096875))/2)),
		},
		{
			// A store of two notes: the vector and keyword signals found
			// only a, the walk both alike. Each of those signals' scores
			// has no spread; found or not is what they say (+1 for a
			// hit), or the newer b would win the tie at 0.
			method: policy.FusionZScore,
			name:   "z-scores: a signal whose hits all score alike still tells found from not",
			add: func(p *pool) {
				p.add(signalVector, 1, "a", mem("a", 1), 0.9)
				p.add(signalKeyword, 1, "a", mem("a", 1), 3)
				p.add(signalGraph, 1, "a", mem("a", 1), 0.1)
				p.add(signalGraph, 2, "b", mem("b", 9), 0.1)
			},
			want: []string{"a", "b"},
			top:  1 / (1 + math.Exp(-2.0/3)), // vector +1, keyword +1, graph 0 (it found both), over 3 weights
		},
		{
			method: policy.FusionZScore,
			name:   "z-scores: one hit per signal is average",
			add: func(p *pool) {
				p.add(signalKeyword, 1, "a", mem("a", 1), 3)
			},
			want: []string{"a"},
			top:  0.5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool()
			tc.add(p)
			got := p.fuse(cmp.Or(tc.method, policy.FusionRRF), tc.weights, 60)
			require.Equal(t, tc.want, ids(got))
			assert.InDelta(t, tc.top, got[0].norm, 1e-9)
		})
	}
}

// TestFuseRepeatable: the same pool fuses to the same scores to the last
// bit, under each method: sums over signals run in one order, not a map's.
func TestFuseRepeatable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := newPool()
	for i := range 200 {
		id := fmt.Sprintf("m%03d", i)
		for _, s := range []string{signalGraph, signalKeyword, signalVector} {
			if r.IntN(4) > 0 {
				p.add(s, 1+r.IntN(200), id, mem(id, i), r.Float64()*math.Pi)
			}
		}
	}
	weights := map[string]float64{signalGraph: 0.7, signalKeyword: 1.3, signalVector: 0.9}
	for _, method := range []string{policy.FusionRRF, policy.FusionScore, policy.FusionZScore} {
		t.Run(method, func(t *testing.T) {
			first := map[string]float64{}
			for _, h := range p.fuse(method, weights, 60) {
				first[h.mem.ID] = h.score
			}
			for range 50 {
				for _, h := range p.fuse(method, weights, 60) {
					if h.score != first[h.mem.ID] {
						t.Fatalf("%s: score %v, first fused %v", h.mem.ID, h.score, first[h.mem.ID])
					}
				}
			}
		})
	}
}

func TestMMRPrefersDiversity(t *testing.T) {
	hs := []*hit{
		{mem: *mem("a", 1), norm: 1.0},
		{mem: *mem("a2", 2), norm: 0.95},
		{mem: *mem("b", 3), norm: 0.9},
	}
	texts := map[string]string{
		"a":  "postgres listens on port 5432",
		"a2": "postgres listens on port 5432 here",
		"b":  "kubernetes rollout finished",
	}
	assert.Equal(t, []string{"a", "b", "a2"}, ids(mmr(hs, texts, 0.5)), "diversity wins at lambda 0.5")
	assert.Equal(t, []string{"a", "a2", "b"}, ids(mmr(hs, texts, 1)), "lambda 1 is pure relevance")
}

func TestByDistance(t *testing.T) {
	hs := []*hit{{mem: *mem("far", 1)}, {mem: *mem("near", 2)}, {mem: *mem("center", 3)}}
	got := byDistance(hs, map[string]int{"center": 0, "near": 1})
	assert.Equal(t, []string{"center", "near", "far"}, ids(got))
}

// TestSignalSlots: a hit's signal slots run in name order (the order
// fusion sums in) and keep a rank and a score apart, as the time signal
// scores candidates it does not rank.
func TestSignalSlots(t *testing.T) {
	require.True(t, slices.IsSorted(signalNames[:]), "slots in name order")
	for i, s := range signalNames {
		assert.Equal(t, i, signalSlot(s), s)
	}
	assert.Panics(t, func() { signalSlot("graf") })

	var h hit
	h.setRank(signalVector, 3, 0.8)
	h.setRaw(signalTime, 0)
	for _, tc := range []struct {
		signal         string
		rank           int
		ranked, scored bool
		raw            float64
	}{
		{signalVector, 3, true, true, 0.8},
		{signalTime, 0, false, true, 0},
		{signalGraph, 0, false, false, 0},
		{signalKeyword, 0, false, false, 0},
	} {
		r, ok := h.rank(tc.signal)
		assert.Equal(t, tc.rank, r, tc.signal)
		assert.Equal(t, tc.ranked, ok, tc.signal)
		v, ok := h.rawScore(tc.signal)
		assert.Equal(t, tc.raw, v, tc.signal)
		assert.Equal(t, tc.scored, ok, tc.signal)
	}
	assert.Equal(t, 1, h.rankedBy())
}

// TestWalkedFirst: without the rerank, graph mode's order is the walk's,
// and the keyword seeds it did not return follow, each part as fused.
func TestWalkedFirst(t *testing.T) {
	p := newPool()
	p.add(signalKeyword, 1, "seed", mem("seed", 1), 9)
	p.add(signalGraph, 1, "w1", mem("w1", 2), 0.5)
	p.add(signalKeyword, 2, "seed2", mem("seed2", 3), 8)
	p.add(signalGraph, 2, "w2", mem("w2", 4), 0.2)
	fused := []*hit{p.hits["seed"], p.hits["w1"], p.hits["seed2"], p.hits["w2"]}
	assert.Equal(t, []string{"w1", "w2", "seed", "seed2"}, ids(walkedFirst(fused)))
}
