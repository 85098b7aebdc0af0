package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Corpus sizes: a vocabulary of CorpusEntities entities and CorpusWords
// words, both drawn with a Zipf distribution so a few are everywhere and
// most are rare, as in real notes.
const (
	CorpusEntities = 4000
	CorpusWords    = 8000
	zipfS, zipfV   = 1.07, 2.0
)

// SyntheticCorpus is a deterministic benchmark corpus: memories with 3-5
// entities each from a Zipf-ish vocabulary, and query generators drawing
// from the same distributions.
type SyntheticCorpus struct {
	// Inputs are the memories, oldest first (created one second apart).
	Inputs []graph.MemoryInput
	// Entities is the entity vocabulary, most frequent first.
	Entities []string
	words    []string
	seed     uint64
}

// Corpus builds n memories in scope s from seed. The same seed gives the same
// titles, contents, entities and times (ids are left to the store).
func Corpus(s graph.Scope, seed uint64, n int) SyntheticCorpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := SyntheticCorpus{seed: seed, Entities: make([]string, CorpusEntities), words: make([]string, CorpusWords)}
	seen := map[string]bool{}
	for i := range c.words {
		w := pseudoWord(r, 2+i%3)
		for seen[w] {
			w = pseudoWord(r, 3+i%3)
		}
		seen[w] = true
		c.words[i] = w
	}
	types := []string{"person", "project", "service", "library", "concept", "organisation"}
	refs := make([]graph.EntityRef, CorpusEntities)
	for i := range refs {
		name := strings.ToUpper(pseudoWord(r, 2)[:1]) + pseudoWord(r, 2+i%2)
		name = fmt.Sprintf("%s%d", name, i) // unique
		c.Entities[i] = name
		refs[i] = graph.EntityRef{Name: name, Type: types[i%len(types)]}
		if i%10 == 0 {
			refs[i].Aliases = []string{fmt.Sprintf("%s-alias", strings.ToLower(name))}
		}
	}
	ez := rand.NewZipf(r, zipfS, zipfV, CorpusEntities-1)
	wz := rand.NewZipf(r, zipfS, zipfV, CorpusWords-1)
	memTypes := []string{"note", "note", "note", "doc", "decision", "task", "episode"}
	start := base.Add(-time.Duration(n) * time.Second)
	c.Inputs = make([]graph.MemoryInput, n)
	for i := range c.Inputs {
		k := 3 + r.IntN(3)
		seen := map[uint64]bool{}
		var ents []graph.EntityRef
		for len(ents) < k {
			e := ez.Uint64()
			if !seen[e] {
				seen[e] = true
				ref := refs[e]
				ref.Aliases = append([]string(nil), ref.Aliases...)
				ents = append(ents, ref)
			}
		}
		var title, body []string
		for j := 0; j < 4+r.IntN(4); j++ {
			title = append(title, c.words[wz.Uint64()])
		}
		title = append(title, ents[0].Name)
		for j := 0; j < 30+r.IntN(40); j++ {
			body = append(body, c.words[wz.Uint64()])
			if j%9 == 4 {
				body = append(body, ents[j%len(ents)].Name)
			}
		}
		c.Inputs[i] = graph.MemoryInput{
			Memory: graph.Memory{Scope: s, UserID: fmt.Sprintf("u%d", r.IntN(20)), Type: memTypes[r.IntN(len(memTypes))],
				Title: strings.Join(title, " "), Tags: []string{fmt.Sprintf("tag%d", r.IntN(30))},
				CreatedAt: start.Add(time.Duration(i) * time.Second)},
			Version: graph.VersionInput{Content: strings.Join(body, " "), Entities: ents},
		}
	}
	return c
}

// EntityQueries returns n candidate queries of 1-3 entity names, drawn with
// the corpus's Zipf distribution (popular entities are asked about most).
func (c SyntheticCorpus) EntityQueries(n int) [][]string {
	r := rand.New(rand.NewPCG(c.seed+1, 7))
	z := rand.NewZipf(r, zipfS, zipfV, uint64(len(c.Entities)-1))
	out := make([][]string, n)
	for i := range out {
		for range 1 + r.IntN(3) {
			out[i] = append(out[i], c.Entities[z.Uint64()])
		}
	}
	return out
}

// QueryStopWords is how many of the corpus's most frequent words keyword
// queries skip: in real text those ranks are function words ("the", "of")
// that analysers drop and agents do not search for.
const QueryStopWords = 100

// KeywordQueries returns n keyword queries of 2-3 words drawn with the
// corpus's word distribution, minus its QueryStopWords most frequent words.
func (c SyntheticCorpus) KeywordQueries(n int) []string {
	r := rand.New(rand.NewPCG(c.seed+2, 11))
	z := rand.NewZipf(r, zipfS, zipfV, uint64(len(c.words)-1-QueryStopWords))
	out := make([]string, n)
	for i := range out {
		var q []string
		for range 2 + r.IntN(2) {
			q = append(q, c.words[QueryStopWords+z.Uint64()])
		}
		out[i] = strings.Join(q, " ")
	}
	return out
}

var syllables = []string{"ka", "lo", "mi", "ren", "sa", "tor", "vel", "zu", "ban", "dri", "fen", "gor", "hal", "jin", "kor", "lum", "nar", "pel", "qui", "ros", "sil", "tam", "ulf", "vor", "wyn", "xan", "yel", "zor"}

func pseudoWord(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	return b.String()
}
