package engine

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/mnemo-dev/mnemo/graph"
)

// Contradiction is a pair of results that cannot both be true. Search flags
// it and leaves the resolution to a curator.
type Contradiction struct {
	A string `json:"a"` // memory id
	B string `json:"b"` // memory id
	// Kind is "canonical_key" (same subject and aspect, another
	// qualifier) or "negation" (near-duplicates, one negated).
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// nearDuplicate is the word-set Jaccard overlap above which two statements
// are the same claim.
const nearDuplicate = 0.6

// contradictions flags contradicting pairs among the active beliefs and facts
// of one user and subject in rs.
func contradictions(rs []SearchResult) []Contradiction {
	out := []Contradiction{}
	for i := range rs {
		a := &rs[i]
		if !isClaim(a.Memory) {
			continue
		}
		for j := i + 1; j < len(rs); j++ {
			b := &rs[j]
			if !isClaim(b.Memory) || a.Memory.UserID != b.Memory.UserID || a.Memory.SubjectID != b.Memory.SubjectID {
				continue
			}
			if c, ok := contradict(a, b); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// isClaim reports whether m is an active belief or fact.
func isClaim(m graph.Memory) bool {
	return m.Status == graph.StatusActive &&
		(m.Type == "belief" || m.Sublayer == "Belief" || m.Sublayer == "Fact")
}

func contradict(a, b *SearchResult) (Contradiction, bool) {
	c := Contradiction{A: a.Memory.ID, B: b.Memory.ID}
	ka, kb := strings.Split(a.Memory.CanonicalKey, "-"), strings.Split(b.Memory.CanonicalKey, "-")
	if len(ka) == 3 && len(kb) == 3 && strings.EqualFold(ka[0], kb[0]) && strings.EqualFold(ka[1], kb[1]) &&
		!strings.EqualFold(ka[2], kb[2]) {
		c.Kind = "canonical_key"
		c.Reason = fmt.Sprintf("same subject and aspect %s-%s with qualifiers %s and %s", ka[0], ka[1], ka[2], kb[2])
		return c, true
	}
	ta, tb := a.fullText, b.fullText
	if negated(ta) != negated(tb) && jaccard(wordSet(ta), wordSet(tb)) >= nearDuplicate {
		c.Kind = "negation"
		c.Reason = "near-duplicate statements, one of them negated"
		return c, true
	}
	return c, false
}

// negations mark a negated statement.
var negations = map[string]bool{"not": true, "never": true, "no": true, "cannot": true, "can't": true,
	"don't": true, "doesn't": true, "didn't": true, "isn't": true, "aren't": true, "wasn't": true,
	"weren't": true, "won't": true, "shouldn't": true, "mustn't": true, "avoid": true, "without": true}

// negated reports whether text holds a negation word.
func negated(text string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	}) {
		if negations[strings.ReplaceAll(w, "’", "'")] {
			return true
		}
	}
	return false
}
