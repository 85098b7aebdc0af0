package extract

import "strings"

// Known is an entity the graph already holds, as the resolver sees it.
type Known struct {
	ID       string
	Name     string
	NormName string
	Type     string
	Aliases  []string
}

// Match says how a mention was resolved.
type Match string

// Match kinds, in the order the resolver tries them.
const (
	MatchNone  Match = ""
	MatchExact Match = "exact"
	MatchAlias Match = "alias"
	MatchFuzzy Match = "fuzzy"
)

// Fuzzy matching limits. Names shorter than FuzzyMinLen letters and digits
// (DB, K8s, Go, React) never match fuzzily: at that length one character
// is a different thing. FuzzyThreshold is the trigram Jaccard similarity at
// or above which two long names are one entity.
const (
	FuzzyMinLen    = 6
	FuzzyThreshold = 0.6
)

// exactOnlyTypes never match fuzzily: get_user and get_users, v1.2.3 and
// v1.2.4 are different things.
var exactOnlyTypes = map[string]bool{"code": true, "version": true, "path": true, "url": true, "handle": true, "tag": true}

// Resolver maps mentions onto known entities so that one real-world thing
// is one Entity across memories. It is not safe for concurrent Add.
type Resolver struct {
	known   []Known
	byNorm  map[string]int
	byAlias map[string]int
	grams   []map[string]struct{}
}

// NewResolver indexes known entities.
func NewResolver(known []Known) *Resolver {
	r := &Resolver{byNorm: map[string]int{}, byAlias: map[string]int{}}
	for _, k := range known {
		r.Add(k)
	}
	return r
}

// Add indexes one more known entity (e.g. one created during this ingest).
func (r *Resolver) Add(k Known) {
	if k.NormName == "" {
		k.NormName = NormName(k.Name)
	}
	i := len(r.known)
	r.known = append(r.known, k)
	if _, ok := r.byNorm[k.NormName]; !ok {
		r.byNorm[k.NormName] = i
	}
	for _, a := range k.Aliases {
		if n := NormName(a); n != "" {
			if _, ok := r.byAlias[n]; !ok {
				r.byAlias[n] = i
			}
		}
	}
	r.grams = append(r.grams, trigrams(k.NormName))
}

// Resolve returns the known entity m refers to and how it matched: by
// exact normalised name, then by alias (either side's), then by fuzzy
// trigram similarity for long names of compatible types.
func (r *Resolver) Resolve(m Mention) (Known, Match) {
	norm := m.NormName
	if norm == "" {
		norm = NormName(m.Name)
	}
	if norm == "" {
		return Known{}, MatchNone
	}
	if i, ok := r.byNorm[norm]; ok {
		return r.known[i], MatchExact
	}
	if i, ok := r.byAlias[norm]; ok {
		return r.known[i], MatchAlias
	}
	for _, a := range m.Aliases {
		n := NormName(a)
		if i, ok := r.byNorm[n]; ok {
			return r.known[i], MatchAlias
		}
		if i, ok := r.byAlias[n]; ok {
			return r.known[i], MatchAlias
		}
	}
	if exactOnlyTypes[m.Type] || compactLen(norm) < FuzzyMinLen {
		return Known{}, MatchNone
	}
	g := trigrams(norm)
	best, bestScore := -1, 0.0
	for i, k := range r.known {
		if exactOnlyTypes[k.Type] || compactLen(k.NormName) < FuzzyMinLen {
			continue
		}
		if m.Type != "" && k.Type != "" && m.Type != k.Type {
			continue
		}
		if digits(norm) != digits(k.NormName) {
			continue // python2 vs python3
		}
		if s := jaccard(g, r.grams[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best >= 0 && bestScore >= FuzzyThreshold {
		return r.known[best], MatchFuzzy
	}
	return Known{}, MatchNone
}

func compact(s string) string { return strings.ReplaceAll(s, " ", "") }

func compactLen(s string) int { return len([]rune(compact(s))) }

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// trigrams returns the character trigrams of a name with spaces removed
// and padded at both ends, so "Postgre SQL" and "PostgreSQL" coincide.
func trigrams(norm string) map[string]struct{} {
	r := []rune("  " + compact(norm) + " ")
	out := make(map[string]struct{}, len(r))
	for i := 0; i+3 <= len(r); i++ {
		out[string(r[i:i+3])] = struct{}{}
	}
	return out
}

func jaccard(a, b map[string]struct{}) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for g := range a {
		if _, ok := b[g]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
