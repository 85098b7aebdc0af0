// Package bm25 is the keyword relevance both stores compute, so that one
// text is indexed under the same terms and one query scores the same on
// SQLite and Neo4j: the tokenizer (Tokens: Unicode words, folded, English
// stems) and Okapi BM25 with FTS5's parameters, the title counting
// TitleWeight times the body.
//
// A score is Σ over the query's terms t in a document d of
// IDF(N, df_t) · Saturate(f_t,d, |d|, avgdl), where f_t,d = TitleWeight ·
// (occurrences in the title) + (occurrences in the body), |d| the tokens of
// title and body, and N, avgdl, df_t the statistics of the documents the
// caller may read (each store decides which those are; docs/search.md).
package bm25

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// BM25 parameters, and the title's weight against the body (the ranking
// FTS5 gave mnemo before: bm25(2.0, 1.0)).
const (
	K1          = 1.2
	B           = 0.75
	TitleWeight = 2
)

// MinIDF is the weight of a term found in half the documents or more: as in
// FTS5, such a term still counts a little rather than nothing or less.
const MinIDF = 1e-6

// IDF is the inverse document frequency of a term found in df of n
// documents, at least MinIDF.
func IDF(n, df float64) float64 {
	idf := math.Log((n - df + 0.5) / (df + 0.5))
	if idf <= 0 {
		return MinIDF
	}
	return idf
}

// Saturate is the weight of a term with (title-weighted) frequency f in a
// document of dl tokens, when documents average avgdl tokens.
func Saturate(f, dl, avgdl float64) float64 {
	return f * (K1 + 1) / (f + K1*(1-B+B*dl/avgdl))
}

// Doc is a document as a store indexes it: its distinct terms in order of
// first appearance, each one's title-weighted frequency, and its length in
// tokens (title and body).
type Doc struct {
	Terms []string
	Freqs []int64
	Len   int64
}

// Index makes the Doc of a title and a body.
func Index(title, body string) Doc { return IndexWith(title, body, Stem) }

// IndexWith is Index with the stemmer given (Stems.Stem when indexing much
// text: Snowball makes tokenizing 500 memories of 40-80 words take 90 ms).
func IndexWith(title, body string, stem func(string) string) Doc {
	var d Doc
	at := map[string]int{}
	count := func(text string, w int64) {
		TokensWith(text, stem, func(t string) {
			d.Len++
			i, ok := at[t]
			if !ok {
				i = len(d.Terms)
				at[t] = i
				d.Terms = append(d.Terms, t)
				d.Freqs = append(d.Freqs, 0)
			}
			d.Freqs[i] += w
		})
	}
	count(title, TitleWeight)
	count(body, 1)
	return d
}

// Tokens calls fn with each term of s as the keyword indexes see it: runs of
// letters, digits and private-use characters, lower-cased, with diacritics
// removed ("Café" -> "cafe"), like FTS5's unicode61 tokenizer; then words of
// three or more ASCII letters are reduced to their English stem (Snowball,
// "Porter2": "researching" and "researched" -> "research"), so a question's
// wording finds a memory's.
func Tokens(s string, fn func(string)) { TokensWith(s, Stem, fn) }

// TokensWith is Tokens with the stemmer given (a cached Stem when indexing
// much text).
func TokensWith(s string, stem func(string) string, fn func(string)) {
	start := -1
	ascii := true
	emit := func(end int) {
		tok := s[start:end]
		if ascii {
			tok = asciiLower(tok)
		} else {
			tok = foldToken(tok)
		}
		if tok != "" {
			fn(stem(tok))
		}
		start, ascii = -1, true
	}
	for i, r := range s {
		tokenChar := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r) && start >= 0)
		switch {
		case tokenChar && start < 0:
			start = i
			ascii = r < utf8.RuneSelf
		case tokenChar:
			ascii = ascii && r < utf8.RuneSelf
		case start >= 0:
			emit(i)
		}
	}
	if start >= 0 {
		emit(len(s))
	}
}

// StemCache caches Stem for one goroutine (Stems is the one to share),
// up to maxStems tokens: a map lookup instead of a lock and a lookup, for
// a writer stemming millions of tokens. A nil StemCache is not usable; make
// one with StemCache{}.
type StemCache map[string]string

// Stem is Stem(tok), cached.
func (c StemCache) Stem(tok string) string {
	if st, ok := c[tok]; ok {
		return st
	}
	st := Stem(tok)
	if len(c) < maxStems {
		c[tok] = st
	}
	return st
}

// Stems caches Stem for a writer that indexes much text, safe for
// concurrent use. The zero value is ready. It keeps at most maxStems
// tokens (an English vocabulary is far smaller), then stems the others
// without caching them.
type Stems struct {
	mu sync.RWMutex
	m  map[string]string
}

const maxStems = 1 << 18

// Stem is Stem(tok), cached.
func (s *Stems) Stem(tok string) string {
	s.mu.RLock()
	st, ok := s.m[tok]
	s.mu.RUnlock()
	if ok {
		return st
	}
	st = Stem(tok)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	if len(s.m) < maxStems {
		s.m[tok] = st
	}
	return st
}

// Stem is the English stem of a lower-case token of three or more ASCII
// letters, and any other token (numbers, identifiers like "k8s", other
// scripts) unchanged.
func Stem(tok string) string {
	if len(tok) < 3 {
		return tok
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 'a' || c > 'z' {
			return tok
		}
	}
	return english.Stem(tok, true)
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// foldToken lower-cases a token and strips its combining marks.
func foldToken(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// QueryTerms are the distinct tokens of a free-text query, in order; any of
// them matches (OR). Nothing in the query is syntax.
func QueryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	Tokens(q, func(tok string) {
		if !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	})
	return out
}

// Terms returns the terms the keyword indexes make of text, in order
// (tests and tools use it to see what a memory is indexed under).
func Terms(text string) []string {
	var out []string
	Tokens(text, func(t string) { out = append(out, t) })
	return out
}

// Score scores every doc of docs against the query terms, with the
// statistics of docs themselves (N, avgdl and each term's document
// frequency): BM25 over a corpus held whole, for the reads no index serves
// (a search as known at a past time, docs/time.md). A doc matching no term
// scores 0.
func Score(docs []Doc, terms []string) []float64 {
	out := make([]float64, len(docs))
	if len(docs) == 0 || len(terms) == 0 {
		return out
	}
	want := make(map[string]int, len(terms))
	for i, t := range terms {
		want[t] = i
	}
	df := make([]float64, len(terms))
	var total float64
	for _, d := range docs {
		total += float64(d.Len)
		for _, t := range d.Terms {
			if i, ok := want[t]; ok {
				df[i]++
			}
		}
	}
	n, avgdl := float64(len(docs)), max(total/float64(len(docs)), 1)
	for j, d := range docs {
		for k, t := range d.Terms {
			if i, ok := want[t]; ok {
				out[j] += IDF(n, df[i]) * Saturate(float64(d.Freqs[k]), float64(d.Len), avgdl)
			}
		}
	}
	return out
}

// Best returns the positions of the limit best scores above 0, highest
// first; tie orders equal scores (a total order, so that equal inputs rank
// equally on every store).
func Best(scores []float64, limit int, tie func(a, b int) int) []int {
	order := make([]int, 0, len(scores))
	for i, sc := range scores {
		if sc > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return tie(a, b)
	})
	return order[:min(len(order), max(limit, 0))]
}
