package bm25

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"Café au lait", []string{"cafe", "au", "lait"}},
		{"naïve-Über_x2", []string{"naiv", "uber", "x2"}},
		{"pi is 3.14", []string{"pi", "is", "3", "14"}},
		{"İstanbul ÅNGSTRÖM", []string{"istanbul", "angstrom"}},
		{"日本語 text", []string{"日本語", "text"}},
		{"k8s/DB v1.2.3", []string{"k8s", "db", "v1", "2", "3"}},
		{"  --  ", nil},
		{"", nil},
		{"e\u0301te", []string{"ete"}}, // combining accent inside a token
		// English stems: a question's wording meets a memory's.
		{"Researching researched research", []string{"research", "research", "research"}},
		{"went to the support groups", []string{"went", "to", "the", "support", "group"}},
		{"painted paintings painter", []string{"paint", "paint", "painter"}},
		{"K8s clusters v2s", []string{"k8s", "cluster", "v2s"}}, // identifiers keep their letters
		{"résumés", []string{"resum"}},
	} {
		var got []string
		Tokens(tc.in, func(s string) { got = append(got, s) })
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
	assert.Equal(t, []string{"dark", "mode"}, QueryTerms("Dark MODE dark modes"), "distinct, in order")
}

func TestIndex(t *testing.T) {
	d := Index("Harbour cranes", "the crane at the harbour, the CRANE")
	assert.Equal(t, []string{"harbour", "crane", "the", "at"}, d.Terms, "distinct terms, first seen first")
	assert.Equal(t, []int64{TitleWeight + 1, TitleWeight + 2, 3, 1}, d.Freqs, "title occurrences count TitleWeight times")
	assert.Equal(t, int64(9), d.Len, "tokens of title and body")
	assert.Equal(t, Doc{}, Index("", " -- "), "no terms")
}

func TestIDF(t *testing.T) {
	assert.InDelta(t, math.Log(2.5/1.5), IDF(3, 1), 1e-15, "ln((N - df + 0.5) / (df + 0.5))")
	assert.Equal(t, 1e-6, IDF(10, 5), "a term in half the documents counts a little")
	assert.Equal(t, 1e-6, IDF(10, 9))
	assert.Greater(t, IDF(100, 1), IDF(100, 10), "rarer terms weigh more")
}

func TestStems(t *testing.T) {
	var s Stems
	c := StemCache{}
	for name, stem := range map[string]func(string) string{"Stems": s.Stem, "StemCache": c.Stem} {
		for _, tok := range []string{"researching", "researching", "k8s", "cafe", "painted"} {
			assert.Equal(t, Stem(tok), stem(tok), "%s %s", name, tok)
		}
		assert.Equal(t, Index("Painted walls", "researching paintings"),
			IndexWith("Painted walls", "researching paintings", stem), "%s: cached stems index the same", name)
	}
}

// TestScoreAndBest: Score is Σ IDF · Saturate with the statistics of the
// docs given, and Best keeps the positive scores, highest first, ties by
// the order given.
func TestScoreAndBest(t *testing.T) {
	docs := []Doc{Index("", "ferry harbour"), Index("", "ferry"), Index("", "crane crane crane")}
	scores := Score(docs, QueryTerms("ferry harbour"))
	avgdl := float64(2+1+3) / 3
	want := []float64{
		IDF(3, 2)*Saturate(1, 2, avgdl) + IDF(3, 1)*Saturate(1, 2, avgdl),
		IDF(3, 2) * Saturate(1, 1, avgdl),
		0,
	}
	for i := range want {
		if math.Abs(scores[i]-want[i]) > 1e-12 {
			t.Errorf("score %d: got %v, want %v", i, scores[i], want[i])
		}
	}
	for _, c := range []struct {
		name   string
		scores []float64
		limit  int
		want   []int
	}{
		{"HighestFirst", scores, 10, []int{0, 1}},
		{"Limit", scores, 1, []int{0}},
		{"TiesInOrder", []float64{1, 2, 1, 0}, 10, []int{1, 0, 2}},
		{"NoLimit", scores, 0, []int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Best(c.scores, c.limit, func(a, b int) int { return a - b })
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
