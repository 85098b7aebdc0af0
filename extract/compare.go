package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Relation is how a new statement stands to a stored one that got the same
// canonical key: the key says they may be about one slot, the relation says
// whether they are.
type Relation int

// Relations, from the safest for the stored memory to the strongest claim.
const (
	// Distinct: a different fact (another subject, or numbers, ids or
	// names that tell the two apart). Both are kept; nothing is flagged.
	Distinct Relation = iota
	// Unsure: the same subject, but no evidence that the new statement
	// replaces the old one. Both are kept and the pair is flagged as a
	// possible contradiction.
	Unsure
	// Restates: the same fact, differing in case, punctuation, whitespace,
	// fluff, articles, plurals, synonyms or light verbs, or saying less. The
	// stored memory is reinforced.
	Restates
	// Updates: the same slot (subject and aspect) with a new value. The new
	// memory supersedes the stored one.
	Updates
)

func (r Relation) String() string {
	switch r {
	case Restates:
		return "restates"
	case Updates:
		return "updates"
	case Unsure:
		return "unsure"
	}
	return "distinct"
}

// Comparison is a Relation with the reason for it, in words.
type Comparison struct {
	Relation Relation
	Reason   string
}

// token is one word of a statement, in canonical form.
type token struct {
	w    string // lower case, synonyms and plurals folded
	dist bool   // tells facts apart: holds a digit, is quoted, an id or a proper name
	id   bool   // an identifier: letters with digits, or a number named by an id noun
	verb bool
	stop bool // a stopword (negations never are)
	// capital: written with a capital letter, also where a sentence starts.
	capital bool
}

// statement is a normalised statement split for comparison.
type statement struct {
	toks []token
	// content are the tokens that carry meaning: no stopwords, no light
	// verbs, negations folded to "not" and dropped (polarity counts them).
	content  []token
	polarity int // number of negations, mod 2
	verb     int // index in toks of the first verb, or -1
	// subject and predicate are the content tokens before and from the
	// first verb; with no verb everything is subject.
	subject, predicate []token
	mainVerb           string // the first verb, canonical
	// relation is the main verb with the preposition that follows it, if
	// any: "is in", "listen on", "report to", "is".
	relation string
}

// Compare tells how the statement b (new) stands to the statement a
// (stored) when both got one canonical key. It is a pure function of the
// two texts and the policy's vocabulary (stopwords, verbs, synonyms), cheap
// enough for every write that meets an existing key:
//
//   - the same words after normalisation (case, punctuation, fluff, one
//     spelling of units and bounds), or the same content words (articles,
//     plurals, synonyms, light verbs such as "is", "uses", "runs", word
//     forms of one root), or fewer of them, or the same words moved
//     without trading roles: Restates;
//   - subjects that differ (numbers, ids, quoted strings or names in them
//     above all): Distinct — they are different facts — unless one role
//     changed holder ("Priya is the on-call engineer" / "Jonas is ..."):
//     Updates;
//   - one subject, verb and relation, the value changed: Updates for a
//     polarity flip, detail added, a changed number beside the thing it
//     measures, a new value of the old one's kind after a copula or a
//     single-valued verb ("lives in", "reports to", "listens on"), or a
//     slot the sentence marks (see compare_slot.go); Distinct when an
//     identifier changed anywhere else;
//   - anything else (the same words with roles traded, another verb, a new
//     object of an event verb or of a verb of many objects, a plain word
//     after a copula, which may be another attribute): Unsure.
func (k *Keyer) Compare(a, b string) Comparison { return k.Relate(k.Statement(a), k.Statement(b)) }

// Statement is a statement analysed once for Relate, SlotKey and FactKey.
type Statement struct{ st statement }

// Statement normalises and analyses text.
func (k *Keyer) Statement(text string) Statement { return Statement{k.statement(text)} }

// Relate is Compare on analysed statements: how b (new) stands to a
// (stored).
func (k *Keyer) Relate(a, b Statement) Comparison {
	sa, sb := a.st, align(a.st, b.st)
	switch {
	case equalWords(sa.toks, sb.toks):
		return Comparison{Restates, "same words once case, punctuation and fluff are set aside"}
	case sameBag(sa.content, sb.content) && equalWords(sa.subject, sb.subject) && byAgent(sa) != byAgent(sb):
		// "Alice hired Bob", "Alice was hired by Bob": the passive turns
		// who did what.
		return Comparison{Unsure, "the same words, one in the passive: the roles may have turned"}
	case sa.polarity == sb.polarity && equalWords(sa.content, sb.content):
		return Comparison{Restates, "same content words"}
	case sa.polarity != sb.polarity && equalWords(sa.content, sb.content):
		return Comparison{Updates, "the same statement with its polarity flipped"}
	case sa.polarity == sb.polarity && sameBag(sa.content, sb.content) && equalWords(sa.subject, sb.subject):
		return Comparison{Restates, "same subject, the same words in another order"}
	case sa.polarity == sb.polarity && sameBag(sa.content, sb.content) && sa.mainVerb == sb.mainVerb &&
		sameBag(sa.subject, sb.subject) && equalWords(dists(sa.subject), dists(sb.subject)):
		// "the budget for Q3" and "the Q3 budget": the subject's words
		// moved, none crossed the verb, and its numbers and names kept
		// their order ("the Berlin office of the London team" is another
		// office than "the London office of the Berlin team").
		return Comparison{Restates, "same subject in other words order, the same predicate"}
	case sa.polarity == sb.polarity && sameBag(sa.content, sb.content) && reordered(sa, sb):
		return Comparison{Restates, "the same words, moved without trading roles"}
	case sameBag(sa.content, sb.content):
		return Comparison{Unsure, "the same words in another order"}
	}

	if !equalWords(sa.subject, sb.subject) {
		if sa.verb < 0 || sb.verb < 0 {
			if distDiffers(sa.subject, sb.subject) {
				return Comparison{Distinct, "numbers, ids or names tell them apart"}
			}
			if subset(sb.content, sa.content) && sa.polarity == sb.polarity {
				return Comparison{Restates, "says nothing the stored memory does not"}
			}
			return Comparison{Distinct, "different statements with no verb to compare"}
		}
		if roleHolder(sa, sb) {
			return Comparison{Updates, "one role or object, another holder"}
		}
		if distDiffers(sa.subject, sb.subject) {
			return Comparison{Distinct, "numbers, ids or names in the subject tell them apart"}
		}
		return Comparison{Distinct, "different subjects"}
	}
	// One subject.
	removed, added := bagDiff(sa.predicate, sb.predicate)
	if sa.polarity == sb.polarity && len(added) == 0 {
		return Comparison{Restates, "says nothing the stored memory does not"}
	}
	if sa.mainVerb != sb.mainVerb {
		return Comparison{Unsure, "same subject, another verb"}
	}
	if sa.relation != sb.relation {
		return Comparison{Unsure, "same subject, another relation (" + sa.relation + ", " + sb.relation + ")"}
	}
	if sa.polarity != sb.polarity {
		return Comparison{Unsure, "same subject, polarity and value both changed"}
	}
	if len(removed) == 0 && !anyID(added) {
		return Comparison{Updates, "same slot, detail added"}
	}
	// shared counts the predicate's kept words that are no verbs: the unit
	// or the thing a number measures ("port", "minutes", "Kubernetes").
	shared := 0
	kept, _ := bagDiff(sa.predicate, removed)
	for _, t := range kept {
		if !t.verb {
			shared++
		}
	}
	switch {
	case len(removed) > 3 || len(added) > 3:
		return Comparison{Unsure, "same subject, much of the statement changed"}
	case allQuantities(removed) && allQuantities(added) && shared >= 1 &&
		(singleValued[sa.mainVerb] || !mentionsTime(sa.predicate) && !mentionsTime(sb.predicate)):
		// A date or time of an event verb ("visited in 2019", "flew on 3
		// March") may be another event, not a correction.
		return Comparison{Updates, "same subject and " + sa.mainVerb + ", a new quantity"}
	case adjunctValue(sa, sb, removed, added):
		return Comparison{Updates, "same subject and " + sa.mainVerb + ", a new time, place or end of one arrangement"}
	case purpose(sa, sb, removed, added):
		return Comparison{Updates, "same subject and " + sa.mainVerb + ", another choice for one purpose"}
	case onceEvents[sa.mainVerb] && allTimes(removed) && allTimes(added) && len(keptBesideVerb(sa, removed)) > 0:
		return Comparison{Updates, "an event that happens once (" + sa.mainVerb + "), a new date"}
	case attributeValue(sa, removed, added):
		return Comparison{Updates, "same subject, a noun that names an attribute, a new value"}
	case redescribed(sa, sb, removed, added):
		return Comparison{Updates, "same subject, the same thing described with another attribute"}
	case copulas[sa.relation] && len(removed) == len(sa.predicate) && plainWords(removed) && plainWords(added):
		// The value right after the copula: "is staging" -> "is
		// production" is a new value, "is friendly" -> "is old" another
		// attribute; without parts of speech they look alike.
		return Comparison{Unsure, "same subject and " + sa.mainVerb + ", another plain word: a new value or another attribute"}
	case singleValued[sa.mainVerb] && len(sa.subject) > 0 && sameKinds(removed, added) &&
		(onlyVerbsShared(sa.predicate, removed) || valueFrame(sa.predicate, removed, added)):
		// After a copula or a single-valued verb an id is the value ("the
		// password is X", "the model is Y").
		return Comparison{Updates, "same subject and " + sa.mainVerb + ", a new value"}
	case anyID(removed) || anyID(added):
		return Comparison{Distinct, "identifiers tell them apart"}
	}
	return Comparison{Unsure, "same subject and " + sa.mainVerb + ", another object"}
}

// mentionsTime reports whether ts hold a year, a date, a time of day, a
// month or a weekday.
func mentionsTime(ts []token) bool {
	for _, t := range ts {
		w := t.w
		if calendar[w] || isDate(w) || len(w) == 4 && (strings.HasPrefix(w, "19") || strings.HasPrefix(w, "20")) && quantity(w) ||
			strings.Contains(w, ":") && quantity(w) {
			return true
		}
	}
	return false
}

// allTimes reports whether ts are numbers, dates, months or weekdays.
func allTimes(ts []token) bool {
	for _, t := range ts {
		if !calendar[t.w] && (!quantity(t.w) || t.id) {
			return false
		}
	}
	return len(ts) > 0
}

// calendar names months and weekdays.
var calendar = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true,
	"august": true, "september": true, "october": true, "november": true, "december": true, "monday": true,
	"tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true,
}

// plainWords reports whether ts are lower-case words that tell nothing
// apart: no number, id, name or quoted string.
func plainWords(ts []token) bool {
	for _, t := range ts {
		if t.dist || quantity(t.w) {
			return false
		}
	}
	return len(ts) > 0
}

// sameKinds reports whether the old and the new value are of one kind —
// quantities, names, ids or plain words: a slot's new value is of the kind
// of its old one ("the lead is Kofi" -> "Amara"), while "the lead is Kofi"
// -> "the lead is on vacation" says something else.
func sameKinds(removed, added []token) bool {
	kinds := func(ts []token) int {
		k := 0
		for _, t := range ts {
			switch {
			case t.id:
				k |= 1
			case quantity(t.w):
				k |= 2
			case t.dist:
				k |= 4
			default:
				k |= 8
			}
		}
		return k
	}
	return kinds(removed) == kinds(added)
}

// onlyVerbsShared reports whether the predicate words kept (pred minus
// removed) are all single-valued verbs or quantities: "is set to X", "is
// in X", "ends on X 2027", but not "is allergic to X" or "is open on X",
// where the kept word names one of many possible slots or takes many
// values.
func onlyVerbsShared(pred, removed []token) bool {
	kept, _ := bagDiff(pred, removed)
	for _, t := range kept {
		if !(t.verb && singleValued[t.w]) && !quantity(t.w) {
			return false
		}
	}
	return true
}

// valueFrame is onlyVerbsShared when the value is a name or an id and the
// kept words frame it: a title or a name of a name ("Dr. Mehta" -> "Dr.
// Laurent", "Lake Bled" -> "Lake Como"), or the noun that names an id
// ("gate B12" -> "gate C4", "room 210" -> "room 305").
func valueFrame(pred, removed, added []token) bool {
	names := namesOnly(removed) && namesOnly(added)
	ids := allIDs(removed) && allIDs(added)
	if !names && !ids {
		return false
	}
	kept, _ := bagDiff(pred, removed)
	for _, t := range kept {
		switch {
		case t.verb && singleValued[t.w], quantity(t.w):
		case names && t.dist && !t.id:
		case ids && idNouns[t.w]:
		default:
			return false
		}
	}
	return true
}

// allIDs reports whether ts are identifiers.
func allIDs(ts []token) bool {
	for _, t := range ts {
		if !t.id {
			return false
		}
	}
	return len(ts) > 0
}

// namesOnly reports whether ts are names: proper or quoted words, no
// numbers or ids.
func namesOnly(ts []token) bool {
	for _, t := range ts {
		if !t.dist || t.id || strings.ContainsAny(t.w, "0123456789") {
			return false
		}
	}
	return len(ts) > 0
}

// dists are the tokens of ts that tell facts apart, in order.
func dists(ts []token) []token {
	var out []token
	for _, t := range ts {
		if t.dist {
			out = append(out, t)
		}
	}
	return out
}

// SameSubject reports whether a and b have a verb and one non-empty
// subject: they are about one thing, whatever they say of it.
func (k *Keyer) SameSubject(a, b Statement) bool {
	return a.st.verb >= 0 && b.st.verb >= 0 && len(a.st.subject) > 0 && equalWords(a.st.subject, b.st.subject)
}

// SameSubject is the Keyer's SameSubject under the extractor's policy.
func (x *Extractor) SameSubject(a, b Statement) bool { return x.keyer.SameSubject(a, b) }

// statement analyses a text: normalise, tokenise, fold.
func (k *Keyer) statement(text string) statement {
	toks := k.tokens(standardQuantities(Normalize(text)))
	joinNames(toks)
	s := statement{toks: toks, verb: -1}
	for i, t := range toks {
		if t.w == "not" {
			s.polarity ^= 1
			continue
		}
		if t.stop || lightVerbs[t.w] {
			if t.verb && s.verb < 0 && i > 0 {
				s.verb, s.mainVerb = i, t.w
			}
			continue
		}
		if t.verb && s.verb < 0 && len(s.content) > 0 && !beforeVerb(toks, i) {
			s.verb, s.mainVerb = i, t.w
		}
		s.content = append(s.content, t)
		if s.verb < 0 {
			s.subject = append(s.subject, t)
		} else {
			s.predicate = append(s.predicate, t)
		}
	}
	s.relation = s.mainVerb
	if s.verb >= 0 {
		for _, t := range toks[s.verb+1:] {
			if t.verb || !t.stop {
				break
			}
			if prepositions[t.w] {
				s.relation += " " + t.w
				break
			}
		}
	}
	return s
}

// beforeVerb reports whether toks[i] is followed by a copula, modal or
// light verb: then it is a noun ("the project lead is", "the run was").
func beforeVerb(toks []token, i int) bool {
	if i+1 >= len(toks) || modals[toks[i].w] || lightVerbs[toks[i].w] || copulas[toks[i].w] {
		return false
	}
	n := toks[i+1]
	return n.verb && (lightVerbs[n.w] || modals[n.w] || copulas[n.w])
}

// lightVerbs carry no value of their own: "the port is 8080", "the service
// uses port 8080" and "the service runs on port 8080" state one fact. Modal
// verbs are not light: "must" and "may" say different things.
var lightVerbs = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "being": true, "am": true,
	"has": true, "have": true, "had": true, "use": true, "run": true, "do": true, "does": true, "did": true,
	"get": true, "gets": true, "got": true, "gotten": true, "getting": true, "uses": true, "runs": true, "using": true, "running": true, "will": true,
}

// singleValuedStems are copulas and verbs whose object is one value at a
// time ("lives in", "reports to", "listens on", "is set to"): a new
// object replaces the old one. Matched with -s, -es, -ed and -d endings.
// Verbs that take many objects ("prefers", "owns", "leads", "needs", "is
// open on") are not here: a new object is another fact.
var singleValuedStems = []string{
	"is", "are", "was", "were", "am", "become", "became", "equal", "listen", "bind", "live", "move", "locate",
	"base", "report", "point", "default", "set", "switch", "change", "migrate", "rename", "cost", "expire",
	"due", "belong", "name", "call", "schedule", "plan", "pin", "store", "kept", "reside", "start", "end",
	"last", "weigh", "measure", "written", "implement", "land", "depart", "arrive", "park",
}

// otherVerbStems are common verbs of notes and conversations that the
// policy's verb list may miss; they split subject from predicate but name
// no single-valued slot.
var otherVerbStems = []string{
	"want", "meet", "met", "hold", "include", "contain", "support", "handle", "serve", "cover", "happen", "occur",
	"say", "said", "show", "list", "track", "go", "went", "come", "came", "sit", "stay", "play", "speak", "read",
	"write", "wrote", "send", "sent", "receive", "like", "love", "hate", "know", "knew", "get", "got", "make", "made",
	"give", "gave", "return", "review", "fix", "visit", "buy", "bought", "call", "adopt", "affect", "define", "ship",
	"find", "found", "record", "use", "drift", "jam", "hang", "feed", "fed", "leak", "fail", "pass", "swarm",
	"break", "broke", "ask", "need", "cause", "fixes", "reject", "skip", "retry", "renew", "terminate", "drop",
	"accept", "release", "approve", "deny", "block", "allow", "check", "build", "test", "create", "delete",
	"prefer", "own", "maintain", "host", "keep", "need", "require", "take", "run", "work", "lead", "manage",
	"charge", "pay", "rent", "earn", "assign", "open", "close", "depend",
}

var (
	singleValued = verbForms(singleValuedStems)
	otherVerbs   = verbForms(otherVerbStems)
)

// verbForms expands stems to their -s, -es, -ed, -d, -ing, -ies and -ied
// forms.
func verbForms(stems []string) map[string]bool {
	m := map[string]bool{}
	for _, st := range stems {
		for _, suf := range []string{"", "s", "es", "ed", "d", "ing"} {
			m[st+suf] = true
		}
		if strings.HasSuffix(st, "e") {
			m[st[:len(st)-1]+"ing"] = true
		}
		if strings.HasSuffix(st, "y") { // retry: retries, retried
			m[st[:len(st)-1]+"ies"] = true
			m[st[:len(st)-1]+"ied"] = true
		}
	}
	return m
}

// quantity reports whether w is a number with at most a short unit: 40k,
// 30s, 64gb, 1.29, 10.0.0.2, 2026-11-26.
func quantity(w string) bool {
	i := strings.LastIndexFunc(w, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 || len(w)-i-1 > 3 {
		return false
	}
	return strings.IndexFunc(w[:i], unicode.IsLetter) < 0
}

// idNouns name the number that follows them as an identifier: ticket 42 and
// ticket 43 are two tickets, not one ticket that changed.
var idNouns = map[string]bool{
	"ticket": true, "issue": true, "pr": true, "incident": true, "bug": true, "case": true, "order": true,
	"invoice": true, "note": true, "observation": true, "item": true, "step": true, "room": true, "flight": true,
	"build": true, "job": true, "task": true, "story": true, "epic": true, "id": true, "number": true,
	"request": true, "commit": true, "pull": true, "sample": true, "entry": true, "record": true, "account": true,
	"host": true, "node": true, "shard": true, "batch": true, "patient": true, "customer": true, "user": true,
	"chapter": true, "section": true, "page": true, "figure": true, "table": true, "test": true, "experiment": true,
	"trial": true, "run": true, "episode": true, "meeting": true, "sprint": true, "lot": true, "unit": true,
	"seat": true, "gate": true, "platform": true, "bay": true, "lane": true, "line": true, "route": true,
	"hydrophone": true, "sensor": true, "device": true, "station": true, "site": true, "plot": true, "well": true,
	"cohort": true, "group": true, "team": true, "phase": true, "stage": true, "part": true, "volume": true,
	"rfc": true, "cve": true, "ip": true, "release": true, "milestone": true, "question": true, "point": true,
}

// tokens splits normalised text into canonical tokens. A token is a run of
// letters and digits, with . - _ / : @ # kept between two of them (so
// 555-1234, v1.2.3, eu-west-1, 10.0.0.1 and a@b.io stay whole);
// contractions are split ("doesn't" -> does not).
func (k *Keyer) tokens(s string) []token {
	var (
		out       []token
		quoted    bool
		sentStart = true
		prevIDN   bool // the previous token was an id noun or '#'
		hash      bool
	)
	emit := func(raw string) {
		lower := strings.ToLower(strings.ReplaceAll(raw, "’", "'"))
		neg := false
		switch {
		case lower == "cannot":
			lower, neg = "can", true
		case lower == "won't":
			lower, neg = "will", true
		case lower == "can't":
			lower, neg = "can", true
		case strings.HasSuffix(lower, "n't"):
			lower, neg = strings.TrimSuffix(lower, "n't"), true
		}
		var extra string // the verb of a contraction: I'm -> I am
		for suf, verb := range contractions {
			if strings.HasSuffix(lower, suf) && len(lower) > len(suf) {
				lower, extra = strings.TrimSuffix(lower, suf), verb
				break
			}
		}
		if n, ok := numberWords[lower]; ok {
			lower = n
		}
		if f, ok := frequencies[lower]; ok {
			lower = f
		}
		if f, ok := prepositionFolds[lower]; ok {
			lower = f
		}
		lower = strings.TrimSuffix(lower, "'s")
		lower = strings.Trim(lower, "'")
		if lower == "" {
			return
		}
		first, _ := utf8.DecodeRuneInString(raw)
		digit := strings.ContainsAny(lower, "0123456789")
		letters := strings.IndexFunc(lower, unicode.IsLetter) >= 0
		t := token{w: k.canonWord(lower)}
		if k.neg.has(lower) {
			t.w = "not"
		}
		t.verb = k.verbs.has(lower) || k.verbs.has(t.w) || singleValued[lower] || singleValued[t.w] ||
			otherVerbs[lower] || isVerbForm(lower, sentStart)
		t.stop = k.stop.has(lower) && t.w != "not" && !modals[lower]
		t.capital = unicode.IsUpper(first) && lower != "i"
		proper := t.capital && !sentStart
		if proper { // "May" mid-sentence is a month, not a modal
			t.stop, t.verb = false, false
		}
		if len(out) > 0 && copulas[out[len(out)-1].w] && !proper && !lightVerbs[lower] {
			// "is living in" says what "lives in" does: a progressive
			// takes its verb's base form.
			if st := ingStem(lower); st != "" {
				t.w, t.verb = st, true
			}
		}
		t.id = hash || digit && (letters && !quantity(lower) || prevIDN) || strings.ContainsAny(lower, "_@#") ||
			digit && strings.Count(lower, "-") >= 2 && !isDate(lower)
		t.dist = digit || quoted || proper || t.id
		out = append(out, t)
		if extra != "" {
			out = append(out, token{w: extra, verb: true, stop: k.stop.has(extra)})
		}
		if neg {
			out = append(out, token{w: "not"})
		}
		prevIDN = idNouns[t.w]
		hash = false
		sentStart = false
	}
	start := -1
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’'
		if !word && start >= 0 && strings.ContainsRune(".-_/:@#", r) {
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if unicode.IsLetter(next) || unicode.IsDigit(next) {
				prev, _ := utf8.DecodeLastRuneInString(s[:i])
				word = unicode.IsLetter(prev) || unicode.IsDigit(prev)
			}
		}
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(s[start:i])
			start = -1
		}
		switch r {
		case '"', '“', '”', '`':
			quoted = !quoted
		case '#':
			hash = true
		case '.':
			// "Dr. Mehta": a title's period ends no sentence.
			sentStart = len(out) == 0 || !titles[out[len(out)-1].w]
		case '!', '?', '\n', ':', ';':
			sentStart = true
		}
	}
	if start >= 0 {
		emit(s[start:])
	}
	return out
}

// canonWord folds w like the key does (synonyms, plurals), and folds the
// -s of a verb too ("deploys", "needs"); words that hold digits stay as
// they are.
func (k *Keyer) canonWord(w string) string {
	if strings.ContainsAny(w, "0123456789") {
		return w
	}
	c := singular(k.canon(w))
	if f := spelling(c); f != c {
		return singular(k.canon(f))
	}
	return c
}

// spelling folds spelling variants of one word: a hyphenated compound of
// letters is one word ("wi-fi", "wifi"; "e-mail", "email"), and the
// regular British endings take their American form ("colour", "centre",
// "organise", "analyse", "catalogue", "licence", "tyre"). Both statements
// are folded alike, so a fold only matters where it joins two spellings.
func spelling(w string) string {
	if strings.Contains(w, "-") && strings.IndexFunc(w, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) }) < 0 {
		w = strings.ReplaceAll(w, "-", "")
	}
	for _, f := range britishEndings {
		if strings.HasSuffix(w, f[0]) && len(w)-len(f[0]) >= int(f[2][0]-'0') {
			return strings.TrimSuffix(w, f[0]) + f[1]
		}
	}
	return w
}

// britishEndings: the ending, its American form and the fewest letters
// that must precede it (so "four", "hour" and "sour" stay).
var britishEndings = [][3]string{
	{"our", "or", "3"}, {"tre", "ter", "2"}, {"ise", "ize", "3"}, {"ised", "ized", "3"}, {"ising", "izing", "3"},
	{"isation", "ization", "2"}, {"yse", "yze", "3"}, {"ysed", "yzed", "3"}, {"ogue", "og", "3"},
	{"ence", "ense", "3"}, {"yre", "ire", "1"},
}

// titles are abbreviations before a name whose period ends no sentence.
var titles = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "mt": true,
	"sr": true, "jr": true, "capt": true}

// contractions are the verb endings split off a word: I'm -> I am.
var contractions = map[string]string{"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would"}

// numberWords spell small numbers: "fifty" and "50" are one value.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
	"hundred": "100",
}

// ingStem is the base form of a present participle whose base is a known
// verb ("living" -> "live", "planning" -> "plan", "working" -> "work"), or
// "".
func ingStem(w string) string {
	if len(w) < 6 || !strings.HasSuffix(w, "ing") {
		return ""
	}
	b := w[:len(w)-3]
	cands := []string{b, b + "e"}
	if n := len(b); n >= 2 && b[n-1] == b[n-2] {
		cands = append(cands, b[:n-1]) // planning, running
	}
	for _, c := range cands {
		if singleValued[c] || otherVerbs[c] {
			return c
		}
	}
	return ""
}

// isVerbForm guesses a past tense or participle ("moved", "found") that
// the policy's verb list misses.
func isVerbForm(w string, sentStart bool) bool {
	if sentStart {
		return false
	}
	if irregular[w] {
		return true
	}
	if len(w) < 5 {
		return false
	}
	return strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed")
}

// irregular are common irregular past forms.
var irregular = map[string]bool{
	"found": true, "made": true, "built": true, "sent": true, "wrote": true, "broke": true, "began": true,
	"became": true, "chose": true, "drove": true, "flew": true, "forgot": true, "froze": true, "gave": true,
	"grew": true, "held": true, "kept": true, "knew": true, "left": true, "lost": true, "meant": true,
	"paid": true, "ran": true, "rose": true, "sold": true, "spoke": true, "spent": true, "stole": true,
	"stood": true, "taught": true, "thought": true, "told": true, "took": true, "went": true, "won": true,
	"bought": true, "brought": true, "caught": true, "fought": true, "sought": true, "saw": true, "met": true,
}

// isDate reports whether w looks like an ISO date (2026-11-26).
func isDate(w string) bool {
	parts := strings.Split(w, "-")
	if len(parts) != 3 || len(parts[0]) != 4 {
		return false
	}
	for _, p := range parts {
		for _, r := range p {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return true
}

func equalWords(a, b []token) bool {
	return slices.EqualFunc(a, b, func(x, y token) bool { return x.w == y.w })
}

// sameBag reports whether a and b hold the same words, in any order.
func sameBag(a, b []token) bool {
	r, ad := bagDiff(a, b)
	return len(r) == 0 && len(ad) == 0
}

// subset reports whether every word of a is in b.
func subset(a, b []token) bool {
	r, _ := bagDiff(a, b)
	return len(r) == 0
}

// bagDiff returns the words of a missing from b (removed) and those of b
// missing from a (added), as multisets.
func bagDiff(a, b []token) (removed, added []token) {
	count := map[string]int{}
	for _, t := range b {
		count[t.w]++
	}
	for _, t := range a {
		if count[t.w] > 0 {
			count[t.w]--
			continue
		}
		removed = append(removed, t)
	}
	count = map[string]int{}
	for _, t := range a {
		count[t.w]++
	}
	for _, t := range b {
		if count[t.w] > 0 {
			count[t.w]--
			continue
		}
		added = append(added, t)
	}
	return removed, added
}

// distDiffers reports whether the distinguishing tokens of a and b differ.
func distDiffers(a, b []token) bool {
	r, ad := bagDiff(a, b)
	return slices.ContainsFunc(r, isDist) || slices.ContainsFunc(ad, isDist)
}

func isDist(t token) bool { return t.dist }

func anyID(ts []token) bool { return slices.ContainsFunc(ts, func(t token) bool { return t.id }) }

// allQuantities reports whether every token is a number, a version, a
// date or a unit-bearing quantity (30s, 4gb).
func allQuantities(ts []token) bool {
	for _, t := range ts {
		if !quantity(t.w) || t.id {
			return false
		}
	}
	return len(ts) > 0
}

// SlotKey and FactKey are the keys a statement falls back to when another
// fact holds its canonical key: SlotKey names its subject and verb (so a
// later new value of the same slot finds it), FactKey its content words (so
// a later restatement finds it). Both keep the key's shape: the qualifier
// gains an X and six hex digits, cut to the key's maximum length.
func (k *Keyer) SlotKey(key string, st Statement) string {
	s := st.st
	parts := make([]string, 0, len(s.subject)+1)
	for _, t := range s.subject {
		parts = append(parts, t.w)
	}
	parts = append(parts, "|", s.mainVerb)
	return k.variant(key, "slot", parts)
}

// FactKey: see SlotKey.
func (k *Keyer) FactKey(key string, st Statement) string {
	s := st.st
	parts := make([]string, 0, len(s.content)+1)
	for _, t := range s.content {
		parts = append(parts, t.w)
	}
	if s.polarity == 1 {
		parts = append(parts, "|not")
	}
	return k.variant(key, "fact", parts)
}

func (k *Keyer) variant(key, kind string, parts []string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + strings.Join(parts, "\x00")))
	suffix := "X" + hex.EncodeToString(sum[:3])
	p := strings.SplitN(key, "-", 3)
	if len(p) != 3 {
		p = []string{k.fallback.Subject, k.fallback.Aspect, ""}
	}
	for len(p[0])+len(p[1])+len(p[2])+len(suffix)+2 > k.max {
		switch {
		case p[2] != "":
			p[2] = p[2][:len(p[2])-1]
		case len(p[0]) >= len(p[1]) && len(p[0]) > 1:
			p[0] = p[0][:len(p[0])-1]
		case len(p[1]) > 1:
			p[1] = p[1][:len(p[1])-1]
		default:
			return p[0] + "-" + p[1] + "-" + suffix
		}
	}
	return p[0] + "-" + p[1] + "-" + p[2] + suffix
}

// Statement is the Keyer's Statement under the extractor's policy.
func (x *Extractor) Statement(text string) Statement { return x.keyer.Statement(text) }

// Relate is the Keyer's Relate under the extractor's policy.
func (x *Extractor) Relate(a, b Statement) Comparison { return x.keyer.Relate(a, b) }

// SlotKey is the Keyer's SlotKey under the extractor's policy.
func (x *Extractor) SlotKey(key string, s Statement) string { return x.keyer.SlotKey(key, s) }

// FactKey is the Keyer's FactKey under the extractor's policy.
func (x *Extractor) FactKey(key string, s Statement) string { return x.keyer.FactKey(key, s) }

// modals are kept as content though the policy lists them as stopwords:
// "must" and "may" say different things.
var modals = map[string]bool{"must": true, "may": true, "might": true, "should": true, "shall": true,
	"can": true, "could": true, "would": true}

// prepositions complete a verb's relation: "is in" and "is" are two.
var prepositions = map[string]bool{"in": true, "at": true, "on": true, "to": true, "for": true, "from": true,
	"with": true, "by": true, "of": true, "into": true, "onto": true, "over": true, "under": true, "about": true,
	"via": true, "behind": true, "near": true, "inside": true, "outside": true, "after": true, "before": true,
	"until": true, "since": true, "during": true}

// Overlap is the share of content words two statements have in common
// (Dice: twice the shared words over the words of both, as multisets), from
// 0 to 1. It is how a memory found by content, not by key, qualifies for
// Relate: below a floor the two are not about one thing.
func (k *Keyer) Overlap(a, b Statement) float64 {
	ca, cb := a.st.content, b.st.content
	if len(ca)+len(cb) == 0 {
		return 0
	}
	removed, _ := bagDiff(ca, cb)
	shared := len(ca) - len(removed)
	return 2 * float64(shared) / float64(len(ca)+len(cb))
}

// Words are the statement's content words, folded: what Overlap counts.
func (s Statement) Words() []string {
	out := make([]string, len(s.st.content))
	for i, t := range s.st.content {
		out[i] = t.w
	}
	return out
}

// Overlap is the Keyer's Overlap under the extractor's policy.
func (x *Extractor) Overlap(a, b Statement) float64 { return x.keyer.Overlap(a, b) }
