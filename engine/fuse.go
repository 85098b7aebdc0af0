package engine

import (
	"cmp"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Retrieval signals, named as the policy's fusion_weights name them.
const (
	signalGraph   = "graph"
	signalVector  = "vector"
	signalKeyword = "keyword"
	// signalTime is whether a memory is dated within a calendar date the
	// query names (search_dates.go); it reorders what the others found.
	signalTime = "time"
)

// signalNames are the signals in name order, the order of their slots in
// a hit and of every sum over signals (so a search's fused scores repeat
// to the last bit).
var signalNames = [...]string{signalGraph, signalKeyword, signalTime, signalVector}

// signalSlot is a signal's slot in a hit. The signals are the constants
// above, so another name is a bug: it panics.
func signalSlot(signal string) int {
	switch signal {
	case signalGraph:
		return 0
	case signalKeyword:
		return 1
	case signalTime:
		return 2
	case signalVector:
		return 3
	}
	panic("engine: no signal " + signal)
}

// Why a result was included (SearchResult.WhyIncluded).
const (
	WhyKeyword      = "keyword_match"
	WhyVector       = "vector_match"
	WhyRelationship = "relationship_path"
	WhyDirect       = "direct_fetch"
	WhyDate         = "date_match"
)

// resultSignals are the signals a result reports (signals, why_included),
// in that order.
var resultSignals = []string{signalGraph, signalKeyword, signalVector, signalTime}

// whyOf maps a signal to its why_included label.
var whyOf = map[string]string{
	signalGraph:   WhyRelationship,
	signalVector:  WhyVector,
	signalKeyword: WhyKeyword,
	signalTime:    WhyDate,
}

// hit is one memory in the candidate pool with what each signal said of it.
type hit struct {
	mem    graph.Memory
	loaded bool // mem holds the memory (vector hits arrive as ids)
	// Per signal slot (signalSlot): the 1-based rank within that signal (0:
	// not ranked) and the signal's own score, when hasRaw has the slot's bit
	// (the time signal scores 0 the candidates it does not rank). Fixed
	// slots, not maps: a search holds hundreds of hits.
	ranks  [len(signalNames)]int
	raw    [len(signalNames)]float64
	hasRaw uint8
	path   []string // graph: the entities (or shared entities) that led here
	score  float64  // fused score
	norm   float64  // fused score scaled to [0, 1]

	cosine    float64 // query-memory cosine (relevance.go), when hasCosine
	hasCosine bool
	relevance float64 // absolute relevance in [0, 1] (relevance.go)

	version    graph.Version // the version shown and cited (once loaded)
	hasVersion bool
	amended    *string  // content of an approved amend edit
	edits      []string // kinds of the approved edits applied
}

// rank returns signal's rank of h, if it ranked h.
func (h *hit) rank(signal string) (int, bool) {
	i := signalSlot(signal)
	return h.ranks[i], h.ranks[i] > 0
}

// rawScore returns signal's own score of h, if it scored h.
func (h *hit) rawScore(signal string) (float64, bool) {
	i := signalSlot(signal)
	return h.raw[i], h.hasRaw&(1<<i) != 0
}

// setRank records signal's rank of h and its score.
func (h *hit) setRank(signal string, rank int, raw float64) {
	i := signalSlot(signal)
	h.ranks[i] = rank
	h.setRaw(signal, raw)
}

// setRaw records signal's score of h without a rank.
func (h *hit) setRaw(signal string, raw float64) {
	i := signalSlot(signal)
	h.raw[i], h.hasRaw = raw, h.hasRaw|1<<i
}

// rankedBy counts the signals that ranked h.
func (h *hit) rankedBy() int {
	n := 0
	for _, r := range h.ranks {
		if r > 0 {
			n++
		}
	}
	return n
}

// text is the content a hit shows: an approved amendment, else its
// version's content.
func (h *hit) text() string {
	if h.amended != nil {
		return *h.amended
	}
	return h.version.Content
}

// pool collects hits from several signals, in first-seen order.
type pool struct {
	order  []string
	hits   map[string]*hit
	active uint8     // slots (signalSlot) of the signals that ran and returned something
	qvec   []float32 // the query's embedding, when the vector signal ran
	// qcontent is the embedding of the query without its calendar dates
	// (contentQuery), beside qvec when the query has any.
	qcontent []float32
}

func newPool() *pool {
	return &pool{hits: map[string]*hit{}}
}

// add records that signal ranked id at rank (1-based). m is nil when only
// the id is known so far.
func (p *pool) add(signal string, rank int, id string, m *graph.Memory, raw float64) *hit {
	h, ok := p.hits[id]
	if !ok {
		h = &hit{}
		p.hits[id] = h
		p.order = append(p.order, id)
	}
	if m != nil && !h.loaded {
		h.mem, h.loaded = *m, true
	}
	if old, seen := h.rank(signal); !seen || rank < old {
		h.setRank(signal, rank, raw)
	}
	p.active |= 1 << signalSlot(signal)
	return h
}

// signals returns the signals that returned something, in name order:
// every sum over signals runs in that order, so a search's fused scores
// repeat to the last bit (in a map's order they did not, and two hits
// whose scores tie could swap between identical searches).
func (p *pool) signals() []string {
	var out []string
	for i, s := range signalNames {
		if p.active&(1<<i) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// remove drops id from the pool.
func (p *pool) remove(id string) {
	delete(p.hits, id)
	p.order = slices.DeleteFunc(p.order, func(x string) bool { return x == id })
}

// weight returns a signal's fusion weight; a missing signal weighs 1.
func weight(weights map[string]float64, signal string) float64 {
	if w, ok := weights[signal]; ok {
		return w
	}
	return 1
}

// fuse scores every hit and returns the hits best first (ties: newest,
// then id). With policy.FusionRRF the score is weighted reciprocal rank
// fusion,
//
//	score = sum over signals s of  w_s / (k + rank_s),
//
// normalised by the best score possible with the active signals (rank 1 in
// each). With policy.FusionScore it is a weighted sum of each signal's own
// scores, min-max normalised over the hits that signal returned,
//
//	score = sum over signals s of  w_s * (raw_s - min_s) / (max_s - min_s),
//
// normalised by the sum of the active signals' weights; a signal that did
// not return a hit adds nothing for it.
func (p *pool) fuse(method string, weights map[string]float64, k int) []*hit {
	if method == policy.FusionScore || method == policy.FusionZScore {
		return p.fuseScores(method, weights)
	}
	sigs := p.signals()
	var best float64
	for _, s := range sigs {
		best += weight(weights, s) / float64(k+1)
	}
	out := make([]*hit, 0, len(p.order))
	for _, id := range p.order {
		h := p.hits[id]
		h.score = 0
		for _, s := range sigs {
			if r, ok := h.rank(s); ok {
				h.score += weight(weights, s) / float64(k+r)
			}
		}
		if best > 0 {
			h.norm = min(h.score/best, 1)
		}
		out = append(out, h)
	}
	sortHits(out)
	return out
}

func (p *pool) fuseScores(method string, weights map[string]float64) []*hit {
	// Per signal: the range, mean and standard deviation of its scores over
	// the hits it returned.
	type stats struct{ lo, hi, sum, sumSq, n, mean, sd float64 }
	var per [len(signalNames)]*stats // by slot
	for _, id := range p.order {
		h := p.hits[id]
		for i, v := range h.raw {
			if h.hasRaw&(1<<i) == 0 {
				continue
			}
			st := per[i]
			if st == nil {
				st = &stats{lo: v, hi: v}
				per[i] = st
			}
			st.lo, st.hi = min(st.lo, v), max(st.hi, v)
			st.sum, st.sumSq, st.n = st.sum+v, st.sumSq+v*v, st.n+1
		}
	}
	for _, st := range per {
		if st != nil {
			st.mean = st.sum / st.n
			st.sd = math.Sqrt(max(st.sumSq/st.n-st.mean*st.mean, 0))
		}
	}
	norm := func(st *stats, v float64) float64 {
		switch {
		case method == policy.FusionZScore && st.sd == 0 && int(st.n) < len(p.order):
			// Every hit of the signal scored alike (a lone hit, or ties):
			// its z-score is undefined, and 0 would rank a hit it found
			// with those it did not. Found is what it says: one standard
			// deviation, as the better of two distinct scores gets.
			return 1
		case method == policy.FusionZScore && st.sd == 0:
			return 0
		case method == policy.FusionZScore:
			return (v - st.mean) / st.sd
		case st.hi > st.lo:
			return (v - st.lo) / (st.hi - st.lo)
		}
		return 1
	}
	var best float64
	for i, st := range per { // in name order, as signals
		if st != nil {
			best += weight(weights, signalNames[i])
		}
	}
	out := make([]*hit, 0, len(p.order))
	for _, id := range p.order {
		h := p.hits[id]
		h.score = 0
		for i, st := range per {
			if st != nil && h.hasRaw&(1<<i) != 0 {
				h.score += weight(weights, signalNames[i]) * norm(st, h.raw[i])
			}
		}
		switch {
		case best == 0:
		case method == policy.FusionZScore:
			// Mean weighted z of 0 maps to 0.5, +2 to 0.88.
			h.norm = 1 / (1 + math.Exp(-h.score/best))
		default:
			h.norm = min(h.score/best, 1)
		}
		out = append(out, h)
	}
	sortHits(out)
	return out
}

// sortHits orders hits by fused score, then newest, then id.
func sortHits(hs []*hit) {
	slices.SortStableFunc(hs, func(a, b *hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := b.mem.CreatedAt.Compare(a.mem.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.mem.ID, b.mem.ID)
	})
}
