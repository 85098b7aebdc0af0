package extract

import (
	"slices"
	"strings"
)

// The rules below say when one subject and verb with another value are one
// slot with a new value rather than another fact. Each rests on how the
// sentence marks the slot, not on what its words mean: a definite role
// ("X is the on-call engineer"), an adjunct of a standing arrangement
// ("meets at X", "closes at 16:00"), the end of a state ("closed until
// X"), a purpose ("uses X for CI"), an event that happens once ("joined
// the company in X"), a noun that names an attribute ("the deploy target
// is X"), or a thing described anew ("a red Volvo", "a blue Volvo").

// roleHolder reports whether a and b give one role or one object its
// holder: the same predicate, names as subjects, and the predicate a
// definite role after a copula ("Priya is the on-call engineer this week")
// or the definite object of a verb with one holder ("Kofi leads the mobile
// team"). "Alice's sister lives in Valencia" and "Alice's brother lives in
// Valencia" are not: their subjects are no names and "lives in" holds many.
func roleHolder(a, b statement) bool {
	if a.verb < 0 || b.verb < 0 || a.polarity != b.polarity || a.relation != b.relation ||
		!equalWords(a.predicate, b.predicate) || len(a.predicate) == 0 {
		return false
	}
	if !allCapitalised(a.subject) || !allCapitalised(b.subject) || equalWords(a.subject, b.subject) ||
		coordinated(a) || coordinated(b) {
		return false
	}
	if !copulas[a.mainVerb] && !oneHolder[a.mainVerb] {
		return false
	}
	return definiteAfter(a) && definiteAfter(b)
}

// allCapitalised reports whether ts are capitalised words, numbers or ids
// left aside: names, also at the start of a sentence ("Priya is ...").
func allCapitalised(ts []token) bool {
	for _, t := range ts {
		if !t.capital || t.id || strings.ContainsAny(t.w, "0123456789") {
			return false
		}
	}
	return len(ts) > 0
}

// coordinated reports whether s's subject joins several with "and", "or"
// or "with": "Kofi and Lena lead the team" is not "Lena leads the team".
func coordinated(s statement) bool {
	return slices.ContainsFunc(s.toks[:s.verb], func(t token) bool { return t.w == "and" || t.w == "or" || t.w == "with" })
}

// oneHolder are verbs whose object has one holder at a time: a team has
// one lead, a service one owner.
var oneHolder = verbForms([]string{"lead", "head", "manage", "chair", "own", "captain", "coach"})

// definiteAfter reports whether s's verb is followed by "the": "is the
// on-call engineer" names one role, while "is my sister" or "is our
// neighbour" is one of many.
func definiteAfter(s statement) bool {
	i := s.verb + 1
	return i < len(s.toks) && definites[s.toks[i].w]
}

var definites = map[string]bool{"the": true}

// adjunctValue reports whether a and b (one subject, verb, relation and
// polarity) differ only in the value of one adjunct that marks a slot, of
// one kind in both: the time or place of a standing arrangement in the
// present tense ("the office closes at 18:00 on Fridays", "the club meets
// at Lena's place", "wants the report in PDF"), or the end of a state with
// "until" in any tense ("the trail is closed until May"). Something other
// than the verb must stay (an object, the adjunct's noun: "on Saturday
// morning"), so that "retries on 503" and "retries on 429" stay two facts;
// and a past event's time or place may be another event ("flew to Paris on
// 3 March", "called the bank on Monday").
func adjunctValue(a, b statement, removed, added []token) bool {
	if len(removed) == 0 || len(added) == 0 || !sameKinds(removed, added) || len(keptBesideVerb(a, removed)) == 0 {
		return false
	}
	pa, oka := adjunctOf(a, removed)
	pb, okb := adjunctOf(b, added)
	if !oka || !okb || pa != pb {
		return false
	}
	if endPreps[pa] {
		return true
	}
	if !standingPreps[pa] || !present(a) || !present(b) || !definiteObject(a) || !definiteObject(b) {
		return false
	}
	// A time, place or form is one slot only for verbs that happen once
	// per occasion ("closes at 18:00", "meets at Lena's place", "arrive on
	// Saturday") or that ask for one thing ("wants the report in PDF", not
	// at a time: "needs the chart at 09:00" and "at 15:00" are two needs);
	// "visits the ward at 09:00" and "at 15:00" are two visits.
	return scheduleVerbs[a.mainVerb] || wishVerbs[a.mainVerb] && !allTimes(removed) && !allTimes(added)
}

// scheduleVerbs happen once per occasion of a schedule; wishVerbs ask for
// one thing.
var (
	scheduleVerbs = verbForms([]string{"open", "close", "start", "begin", "end", "finish", "arrive", "depart",
		"leave", "land", "meet", "gather", "convene", "launch"})
	wishVerbs = verbForms([]string{"want", "need", "expect", "require", "prefer"})
)

// definiteObject reports whether every noun between s's verb and its first
// preposition follows a definite determiner: "wants the report in PDF" is
// one report, while "has an index on customer_id" is one index of many.
func definiteObject(s statement) bool {
	det := ""
	for _, t := range s.toks[s.verb+1:] {
		switch {
		case prepositions[t.w] || endPreps[t.w]:
			return true
		case t.stop:
			det = t.w
		case !definites[det]:
			return false
		}
	}
	return true
}

// standingPreps mark the time, place or form of an arrangement; endPreps
// the end of a state.
var (
	standingPreps = map[string]bool{"at": true, "in": true, "on": true}
	endPreps      = map[string]bool{"until": true, "till": true}
)

// adjunctOf returns the preposition that introduces every one of ts in s:
// the words between it and them are no verbs and no other preposition.
func adjunctOf(s statement, ts []token) (string, bool) {
	prep := ""
	for _, t := range ts {
		i := slices.IndexFunc(s.toks[s.verb+1:], func(u token) bool { return u.w == t.w })
		if i < 0 {
			return "", false
		}
		p := ""
		for j := s.verb + i; j > s.verb; j-- {
			u := s.toks[j]
			if prepositions[u.w] || endPreps[u.w] {
				p = u.w
				break
			}
			if u.verb {
				break
			}
		}
		if p == "" || prep != "" && p != prep {
			return "", false
		}
		prep = p
	}
	return prep, prep != ""
}

// keptBesideVerb are the predicate words of s that are not in removed and
// not its main verb.
func keptBesideVerb(s statement, removed []token) []token {
	kept, _ := bagDiff(s.predicate, removed)
	return slices.DeleteFunc(slices.Clone(kept), func(t token) bool { return t.w == s.mainVerb })
}

// present reports whether s's main verb is in the present tense: no -ed,
// no irregular past, no "was", "were", "did" or "had".
func present(s statement) bool {
	v := s.mainVerb
	return !(strings.HasSuffix(v, "ed") || irregular[v] || v == "was" || v == "were" || v == "did" || v == "had")
}

// purpose reports whether a and b (one subject and verb) use another thing
// for one purpose: "the team uses Jenkins for CI", "... GitHub Actions for
// CI". The words after "for" name the slot and stay; what changed is the
// object before it. "We use Postgres for billing" and "... for analytics"
// changed the purpose: two facts.
func purpose(a, b statement, removed, added []token) bool {
	if !choiceVerbs[a.mainVerb] || !present(a) || !present(b) || !sameKinds(removed, added) {
		return false
	}
	return beforeFor(a, removed) && beforeFor(b, added)
}

// choiceVerbs choose a thing for a purpose.
var choiceVerbs = map[string]bool{"use": true, "uses": true, "choose": true, "prefer": true, "rely": true, "need": true}

// beforeFor reports whether every one of ts stands between s's verb and a
// "for" that is followed by at least one word.
func beforeFor(s statement, ts []token) bool {
	f := slices.IndexFunc(s.toks[s.verb+1:], func(u token) bool { return u.w == "for" })
	if f < 0 || s.verb+1+f+1 >= len(s.toks) {
		return false
	}
	obj := s.toks[s.verb+1 : s.verb+1+f]
	for _, t := range ts {
		if !slices.ContainsFunc(obj, func(u token) bool { return u.w == t.w }) {
			return false
		}
	}
	return len(ts) > 0
}

// onceEvents happen once to a subject and its object: a new date of
// "joined the company" corrects the old one, while "visited the office"
// may be another visit.
var onceEvents = map[string]bool{
	"joined": true, "founded": true, "established": true, "born": true, "graduated": true, "married": true,
	"hired": true, "retired": true, "died": true, "incorporated": true, "emigrated": true,
}

// attributeNouns name an attribute whose value follows a copula: "the
// deploy target is staging" -> "production" is a new value, while "the dog
// is friendly" -> "old" is another attribute of the dog. Nouns of things
// that have many attributes (branch, host, channel) are not here: "the
// main branch is green" -> "frozen".
var attributeNouns = map[string]bool{
	"target": true, "mode": true, "status": true, "state": true, "stage": true, "phase": true, "environment": true,
	"region": true, "zone": true, "default": true, "format": true, "language": true, "locale": true,
	"timezone": true, "currency": true, "tier": true, "level": true, "priority": true, "color": true,
	"size": true, "strategy": true, "method": true, "provider": true, "backend": true, "engine": true,
	"driver": true, "key": true, "scheme": true, "algorithm": true, "protocol": true, "policy": true,
	"owner": true, "vendor": true, "destination": true,
}

// attributeValue reports whether a and b give the attribute their
// subject's last word names a new value after a copula: the whole value
// replaced by one of at most three words.
func attributeValue(a statement, removed, added []token) bool {
	if len(a.subject) == 0 || !copulas[a.relation] || len(removed) != len(a.predicate) ||
		len(removed) > 3 || len(added) > 3 || !attributeNouns[a.subject[len(a.subject)-1].w] {
		return false
	}
	// The value is of the old one's kind: names or ids for names or ids
	// ("UUIDv7" -> "ULID"), or plain words of one shape — "main" ->
	// "protected", "JSON" -> "configurable" describe the attribute instead.
	if dists(removed) != nil && len(dists(removed)) == len(removed) && len(dists(added)) == len(added) {
		return true
	}
	return plainWords(removed) && plainWords(added) && adjectival(removed) == adjectival(added)
}

// adjectival reports whether the last of ts has the ending of a
// participle or an adjective: protected, configurable, visible, active.
func adjectival(ts []token) bool {
	w := ts[len(ts)-1].w
	for _, suf := range []string{"ed", "able", "ible", "ive", "ful", "less", "ous", "ent", "ant", "al"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf)+2 {
			return true
		}
	}
	return irregular[w]
}

// redescribed reports whether a and b describe their subject after a
// copula by one noun with another colour: "Bob's car is a red Volvo" ->
// "a blue Volvo". The noun that stays names the thing; the colour is its
// attribute, and a thing has one. Other modifiers may be other attributes
// ("a black cat" -> "a fat cat", "a laser printer" -> "a colour
// printer"); "Alice's sister is a doctor" -> "a teacher" changed the noun.
func redescribed(a, b statement, removed, added []token) bool {
	if !copulas[a.relation] || len(removed) != 1 || len(added) != 1 || len(a.predicate) < 2 ||
		len(a.predicate) != len(b.predicate) || !plainWords(removed) || !plainWords(added) {
		return false
	}
	for _, s := range []statement{a, b} {
		for _, t := range s.predicate {
			if t.verb {
				return false
			}
		}
	}
	last := len(a.predicate) - 1
	return a.predicate[last].w == b.predicate[last].w && a.predicate[last].w != removed[0].w &&
		colours[removed[0].w] && colours[added[0].w]
}

// colours name one attribute that a thing has one value of.
var colours = map[string]bool{
	"red": true, "blue": true, "green": true, "yellow": true, "black": true, "white": true, "grey": true,
	"gray": true, "silver": true, "gold": true, "orange": true, "purple": true, "pink": true, "brown": true,
	"beige": true, "navy": true, "teal": true,
}
