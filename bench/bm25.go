package bench

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// bm25Stop are the "common stop words" of the bench README's BM25 baseline
// (NLTK's English list).
var bm25Stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves what which who
		whom this that these those am is are was were be been being have has had having do does did doing a an
		the and but if or because as until while of at by for with about against between into through during
		before after above below to from up down in out on off over under again further then once here there
		when where why how all any both each few more most other some such no nor not only own same so than too
		very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
		mightn mustn needn shan shouldn wasn weren won wouldn`) {
		m[w] = true
	}
	return m
}()

// bm25Tokens lower-cases text, splits it into runs of letters and digits and
// drops stop words.
func bm25Tokens(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !bm25Stop[w] {
			out = append(out, w)
		}
	}
	return out
}

// BM25 is a plain Okapi BM25 index over a few thousand texts (one
// conversation's turns, one multi-hop set's passages): the baseline row of
// the benchmarks (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df +
// 0.5) / (df + 0.5))).
type BM25 struct {
	ids   []string
	tf    []map[string]int
	lens  []int
	df    map[string]int
	avgdl float64
}

// NewBM25 indexes texts under ids (same order).
func NewBM25(ids, texts []string) *BM25 {
	x := &BM25{ids: ids, df: map[string]int{}}
	total := 0
	for _, t := range texts {
		tf := map[string]int{}
		toks := bm25Tokens(t)
		for _, w := range toks {
			tf[w]++
		}
		for w := range tf {
			x.df[w]++
		}
		x.tf = append(x.tf, tf)
		x.lens = append(x.lens, len(toks))
		total += len(toks)
	}
	if len(texts) > 0 {
		x.avgdl = float64(total) / float64(len(texts))
	}
	return x
}

// Search returns the ids of the k best texts for query, best first (ties in
// document order); texts that share no term with it are left out.
func (x *BM25) Search(query string, k int) []string {
	const k1, b = 1.2, 0.75
	n := float64(len(x.ids))
	scores := make([]float64, len(x.ids))
	seen := map[string]bool{}
	for _, q := range bm25Tokens(query) {
		if seen[q] {
			continue
		}
		seen[q] = true
		df := float64(x.df[q])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, tf := range x.tf {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(x.lens[i])/x.avgdl))
		}
	}
	order := make([]int, len(x.ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	var out []string
	for _, i := range order[:min(k, len(order))] {
		if scores[i] <= 0 {
			break
		}
		out = append(out, x.ids[i])
	}
	return out
}
