package extract

import (
	"slices"
	"strings"
)

// Two statements of one fact often use two forms of one word: "before
// expiry" and "before they expire", "allergic to shellfish" and "a
// shellfish allergy", "the landlord's name is" and "the landlord is named".
// align renames such a word of the new statement to the stored one's form
// before they are compared. Only plain words are aligned (never numbers,
// ids or names), and only a word the other statement lacks with one the
// first lacks: a form shared by both is already equal.

// align returns b with the words it has and a lacks renamed to a's form of
// the same root, where a has a word b lacks with that root.
func align(a, b statement) statement {
	removed, added := bagDiff(a.content, b.content)
	rename := map[string]string{}
	used := map[string]bool{}
	for _, t := range added {
		if t.dist || rename[t.w] != "" {
			continue
		}
		for _, r := range removed {
			if !r.dist && !used[r.w] && sameRoot(r.w, t.w) {
				rename[t.w], used[r.w] = r.w, true
				break
			}
		}
	}
	if len(rename) == 0 {
		return b
	}
	re := func(ts []token) []token {
		out := slices.Clone(ts)
		for i := range out {
			if w, ok := rename[out[i].w]; ok {
				out[i].w = w
			}
		}
		return out
	}
	// toks keep their written forms: passive() reads the participle.
	b.content, b.subject, b.predicate = re(b.content), re(b.subject), re(b.predicate)
	if w, ok := rename[b.mainVerb]; ok {
		b.relation = w + strings.TrimPrefix(b.relation, b.mainVerb)
		b.mainVerb = w
	}
	return b
}

// sameRoot reports whether x and y are two forms of one word: a shared
// stem of at least four letters and two endings that inflect or derive it
// (name, named; expire, expiry; allergy, allergic; rotate, rotation;
// plan, planned). Only the pairs of endings in rootPairs
// count: "plan" and "plane", "read" and "ready", "direct" and "direction"
// are other words.
func sameRoot(x, y string) bool {
	if x == y {
		return true
	}
	if strings.ContainsAny(x+y, "0123456789") {
		return false
	}
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	if p < 4 {
		return false
	}
	rx, ry := undouble(x[p:], x[p-1]), undouble(y[p:], y[p-1])
	if rx > ry {
		rx, ry = ry, rx
	}
	return rootPairs[[2]string{rx, ry}]
}

// undouble drops a doubled last consonant of the stem from an ending:
// planned is plan + ed.
func undouble(end string, last byte) string {
	if len(end) > 1 && end[0] == last && !strings.ContainsRune("aeiou", rune(last)) {
		return end[1:]
	}
	return end
}

// rootPairs are the endings, in order, that make two forms of one word.
// An "-ing" form is left out: "the report is printed" and "is printing"
// are two states.
var rootPairs = map[[2]string]bool{
	{"", "d"}: true, {"", "ed"}: true, {"e", "y"}: true, {"ic", "y"}: true, {"ies", "y"}: true,
	{"ied", "y"}: true, {"ied", "ies"}: true, {"e", "ion"}: true, {"ation", "e"}: true, {"ed", "ion"}: true,
}

// passive reports whether s is in the passive voice: a copula followed by a
// past participle ("is terminated at", "was planted with").
func passive(s statement) bool {
	if s.verb < 0 || !copulas[s.mainVerb] && !getForms[s.mainVerb] {
		return false
	}
	for _, t := range s.toks[s.verb+1:] {
		if t.stop || t.w == "not" {
			continue
		}
		return t.verb && (strings.HasSuffix(t.w, "ed") || irregular[t.w] || strings.HasSuffix(t.w, "en"))
	}
	return false
}

// getForms make a passive as copulas do: "got serviced".
var getForms = map[string]bool{"get": true, "gets": true, "got": true, "gotten": true}

// byAgent reports whether the passive s names who acted ("hired by Bob").
func byAgent(s statement) bool {
	return passive(s) && slices.ContainsFunc(s.toks[s.verb+1:], func(t token) bool { return t.w == "by" })
}

// participleOf reports whether the passive s is built on the verb v
// ("is terminated" on "terminate").
func participleOf(s statement, v string) bool {
	for _, t := range s.toks[s.verb+1:] {
		if t.stop || t.w == "not" {
			continue
		}
		return sameRoot(t.w, v)
	}
	return false
}

// reordered tells, for two statements with the same content words and
// polarity but other subjects, whether they say one thing. Words may move
// across the verb in one direction ("the demo went fine with the Acme
// team", "the demo with the Acme team went fine"): then no two words traded
// roles. Words that cross both ways traded roles ("Alice reports to Bob",
// "Bob reports to Alice") — unless the verb's frame turned with them: the
// passive of the same verb ("the gateway terminates TLS", "TLS is
// terminated at the gateway") or "has" against a copula of place ("room 210
// has the projector", "the projector is in room 210"). The names and
// numbers that are no dates keep their order unless the frame turned.
func reordered(a, b statement) bool {
	crossAB := len(intersect(a.subject, b.predicate)) > 0
	crossBA := len(intersect(b.subject, a.predicate)) > 0
	if !crossAB || !crossBA {
		return equalWords(anchors(a.content), anchors(b.content))
	}
	return turned(a, b) || turned(b, a)
}

// turned reports whether b says a with its verb's frame turned: b is the
// passive of a's verb, or a "has" what b says is in, at or on a place.
func turned(a, b statement) bool {
	if a.verb < 0 || b.verb < 0 {
		return false
	}
	if !passive(a) && passive(b) && participleOf(b, a.mainVerb) {
		return true
	}
	if passive(a) && passive(b) && alternates(a, b) {
		return true
	}
	return (a.mainVerb == "has" || a.mainVerb == "have") && copulas[b.mainVerb] &&
		(b.relation == b.mainVerb+" in" || b.relation == b.mainVerb+" at" || b.relation == b.mainVerb+" on")
}

// alternates reports whether the passives a and b put the same two things
// on either side of "with" and a preposition of place: "bed 6 was planted
// with kale", "kale was planted in bed 6" (the spray/load alternation).
func alternates(a, b statement) bool {
	pa, pb := prepAfterVerb(a), prepAfterVerb(b)
	return pa == "with" && loadPreps[pb] || pb == "with" && loadPreps[pa]
}

// loadPreps put a thing in, on or into a place.
var loadPreps = map[string]bool{"in": true, "into": true, "on": true, "onto": true}

// prepAfterVerb is the first preposition after s's participle, or "".
func prepAfterVerb(s statement) string {
	for _, t := range s.toks[s.verb+1:] {
		if prepositions[t.w] {
			return t.w
		}
	}
	return ""
}

// anchors are the names, numbers and ids of ts that are no dates or times:
// the words whose order tells who does what to whom.
func anchors(ts []token) []token {
	var out []token
	for i, t := range ts {
		if !t.dist || calendar[t.w] || mentionsTime(ts[i:i+1]) || quantity(t.w) && nextToCalendar(ts, i) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// nextToCalendar reports whether the number ts[i] stands beside a month or
// weekday: the day of a date ("1 October", "October 1").
func nextToCalendar(ts []token, i int) bool {
	return i > 0 && calendar[ts[i-1].w] || i+1 < len(ts) && calendar[ts[i+1].w]
}

// intersect returns the words of a that are in b.
func intersect(a, b []token) []token {
	removed, _ := bagDiff(a, b)
	kept, _ := bagDiff(a, removed)
	return kept
}
