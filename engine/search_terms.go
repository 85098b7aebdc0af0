package engine

import (
	"strings"
	"unicode"
)

// maxQueryNames caps the entity names one query hands to Store.Candidates.
const maxQueryNames = 96

// stopWords are never an entity name on their own and never start or end a
// multi-word name: articles, pronouns, auxiliaries, question words and the
// commonest prepositions and adverbs of English.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing done down during
		each else ever few for from further get got had has have having he her here hers herself him himself
		his how i if in into is it its itself just let like lot me might more most much must my myself no nor
		not now of off on once only or other our ours ourselves out over own per same she should since so
		some such than that the their theirs them themselves then there these they this those through to too
		under until up upon us very was way we well were what when where whether which while who whom whose
		why will with would yet you your yours yourself yourselves s t d ll m re ve don doesn didn isn aren
		wasn weren won anything something everything thing things kind sort many often ever recently`) {
		m[w] = true
	}
	return m
}()

// words splits text into lower-case words of letters and digits; an
// apostrophe inside a word ends it ("Caroline's" -> "caroline", "s").
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// queryNames returns the names a query may mention: its 1-, 2- and 3-word
// n-grams that neither start nor end with a stop word, longest first,
// deduplicated, at most maxQueryNames. Store.Candidates matches them against
// entity norm names and aliases, so the store, not a guess, decides which
// are entities.
func queryNames(query string) []string {
	ws := words(query)
	seen := map[string]bool{}
	var out []string
	for n := 3; n >= 1; n-- {
		for i := 0; i+n <= len(ws); i++ {
			if stopWords[ws[i]] || stopWords[ws[i+n-1]] {
				continue
			}
			name := strings.Join(ws[i:i+n], " ")
			if len(name) < 2 || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, name)
			if len(out) == maxQueryNames {
				return out
			}
		}
	}
	return out
}

// wordSet is the set of text's words that are not stop words.
func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(text) {
		if !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

// keywordQuery is the query handed to keyword search: its words without
// stop words (a backend's full-text OR query would otherwise reward every
// "the" and "did"), or the query itself when nothing else is left.
func keywordQuery(query string) string {
	var kept []string
	for _, w := range words(query) {
		if !stopWords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return query
	}
	return strings.Join(kept, " ")
}
