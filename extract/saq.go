package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/policy"
)

// Keyer builds SAQ canonical keys {Subject}-{Aspect}-{Qualifier} from the
// vocabulary of one policy. Build it once per policy with NewKeyer; it is
// safe for concurrent use.
//
// The rules, in order:
//   - words are lower-cased, mapped through synonyms and folded to singular;
//   - subject: a first-person statement is SelfSubject, one opening with an
//     imperative verb is ImperativeSubject, else the head noun of the phrase
//     before the first verb or cue;
//   - aspect: the first aspect (in policy order) with a cue in the statement,
//     else the fallback aspect; its last cue in the statement is the one used;
//   - qualifier: the cue's fixed qualifier if the policy gives one; else,
//     when a subject phrase of two or more salient words is followed by a
//     copula or a single-valued verb ("the deploy target is staging", "the
//     log level defaults to info"), its salient words besides the head, so
//     the key names the slot and not its value; else the first two salient
//     words (no stopwords, verbs, generic or banned words, numbers); a
//     negated statement swaps the first through the antonym table (not
//     relative -> Absolute);
//   - parts are PascalCase and the key is cut to max_length.
type Keyer struct {
	max                 int
	selfSubj, imperSubj string
	fallback            policy.Fallback
	banned, self, imper set
	verbs, neg, stop    set
	generic             set
	syn, ant            map[string]string
	aspects             []policy.Aspect
	cueAspect           map[string]int // cue -> index of the first aspect listing it
	protected           set            // words never folded to singular
}

type set map[string]struct{}

func newSet(lists ...[]string) set {
	s := set{}
	for _, l := range lists {
		for _, w := range l {
			s[strings.ToLower(w)] = struct{}{}
		}
	}
	return s
}

func (s set) has(w string) bool { _, ok := s[w]; return ok }

// NewKeyer compiles the SAQ vocabulary of p.
func NewKeyer(p *policy.Policy) *Keyer {
	q := p.SAQ
	k := &Keyer{
		max:       q.MaxLength,
		selfSubj:  q.SelfSubject,
		imperSubj: q.ImperativeSubject,
		fallback:  q.Fallback,
		banned:    newSet(q.BannedWords),
		self:      newSet(q.SelfWords),
		imper:     newSet(q.Imperatives),
		verbs:     newSet(q.Verbs),
		neg:       newSet(q.Negations),
		stop:      newSet(q.Stopwords),
		generic:   newSet(q.Generic),
		syn:       q.Synonyms,
		ant:       q.Antonyms,
		aspects:   q.Aspects,
		cueAspect: map[string]int{},
	}
	if k.max <= 0 || k.max > 30 {
		k.max = 30
	}
	var cues []string
	for i, a := range q.Aspects {
		for _, c := range a.Cues {
			c = strings.ToLower(c)
			cues = append(cues, c)
			if _, ok := k.cueAspect[c]; !ok {
				k.cueAspect[c] = i
			}
		}
	}
	k.protected = newSet(q.SelfWords, q.Imperatives, q.Verbs, q.Negations, q.Stopwords, cues)
	return k
}

// Key builds the canonical key of text under p. Build a Keyer once when
// keying many texts under one policy.
func Key(p *policy.Policy, text string) string { return NewKeyer(p).Key(text) }

// Key builds the canonical key of one statement. It always returns a key
// of three PascalCase parts joined by '-', at most max_length long.
func (k *Keyer) Key(text string) string { return k.keyOf(Normalize(text)) }

// keyOf keys an already normalized text.
func (k *Keyer) keyOf(norm string) string {
	words, raw := k.split(firstSentence(norm))

	negated := false
	for _, w := range words {
		if k.neg.has(w) {
			negated = true
			break
		}
	}

	aspect, cue := k.aspect(words)
	subject, head, verb := k.subject(words, raw)

	var qual []string
	if cue >= 0 && aspect >= 0 {
		if fixed := k.aspects[aspect].Qualifiers[words[cue]]; fixed != "" {
			qual = []string{fixed}
		}
	}
	if qual == nil && k.slotPhrase(words, raw, head, verb) {
		qual = k.qualifier(words[:verb], head, aspect, negated)
		if qual == nil {
			qual = []string{}
		}
	}
	if sv := k.slotVerb(words, raw, head, verb); qual == nil && sv >= 0 {
		qual = []string{words[sv]}
		if _, cue := k.cueAspect[words[sv]]; cue {
			qual = []string{} // the aspect names the slot: "the report is due"
		}
	}
	if qual == nil {
		qual = k.qualifier(words, head, aspect, negated)
	}

	a := k.fallback.Aspect
	if aspect >= 0 {
		a = k.aspects[aspect].Name
	}
	return k.assemble(subject, a, qual)
}

// firstSentence returns the statement's first sentence.
func firstSentence(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return s[:i]
		case '.', '!', '?', ';':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n' {
				return s[:i]
			}
		}
	}
	return s
}

// split splits s into canonical lower-case words — letters, digits and
// apostrophes, with dots kept between digits (0.0.0.0, v1.2), mapped
// through synonyms and folded to singular — and the same words lower-cased
// only.
func (k *Keyer) split(s string) (words, raw []string) {
	raw = k.rawWords(s)
	words = make([]string, len(raw))
	for i, w := range raw {
		words[i] = k.canon(w)
	}
	return words, raw
}

// rawWords splits s into lower-case words.
func (k *Keyer) rawWords(s string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := strings.Trim(strings.ToLower(s[start:end]), "'.")
		w = strings.TrimSuffix(w, "'s")
		start = -1
		if w != "" {
			out = append(out, strings.ReplaceAll(w, "’", "'"))
		}
	}
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’'
		if r == '.' && start >= 0 && i+1 < len(s) && isDigit(s[i+1]) && i > 0 && isDigit(s[i-1]) {
			word = true
		}
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// canon maps a word through synonyms and folds plurals.
func (k *Keyer) canon(w string) string {
	w = strings.ReplaceAll(w, "’", "'")
	if s, ok := k.syn[w]; ok {
		return s
	}
	if k.protected.has(w) {
		return w
	}
	if s := singular(w); s != w {
		if syn, ok := k.syn[s]; ok {
			return syn
		}
		return s
	}
	return w
}

// singular folds a regular English plural: paths -> path, policies -> policy.
func singular(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") && !strings.HasSuffix(w, "'s"):
		return w[:n-1]
	}
	return w
}

// aspect returns the index of the first policy aspect cued in words and the
// position of its last cue (the object usually follows the verb: "listens
// on port" is about the port), or -1, -1.
func (k *Keyer) aspect(words []string) (aspect, cue int) {
	aspect, cue = -1, -1
	for i, w := range words {
		a, ok := k.cueAspect[w]
		if !ok {
			continue
		}
		if aspect < 0 || a <= aspect {
			aspect, cue = a, i
		}
	}
	return aspect, cue
}

// subject returns the subject part, the position of the head word used
// for it (or -1) and the position of the verb that ends the subject phrase
// (or -1). A month or weekday is when something holds, never what it is
// about: "Rotate the staging API keys before Friday" is about the keys.
func (k *Keyer) subject(words, raw []string) (string, int, int) {
	for _, w := range words {
		if k.self.has(w) {
			return k.selfSubj, -1, -1
		}
	}
	if len(words) > 0 {
		first := 0
		if words[0] == "please" && len(words) > 1 {
			first = 1
		}
		if k.imper.has(words[first]) {
			return k.imperSubj, -1, -1
		}
	}
	head, verb := -1, -1
	for i, w := range words {
		if k.verbs.has(w) || k.neg.has(w) || head >= 0 && k.inflectedVerb(raw, i) {
			verb = i
			break
		}
		if _, cue := k.cueAspect[w]; cue {
			break
		}
		if k.salient(w) && !calendar[w] {
			head = i
		}
	}
	if head < 0 {
		for i, w := range words {
			if k.salient(w) && !calendar[w] && !k.generic.has(w) {
				if _, cue := k.cueAspect[w]; !cue {
					head = i
					break
				}
			}
		}
	}
	if head < 0 {
		return k.fallback.Subject, -1, verb
	}
	if verb < 0 {
		for i := head + 1; i < len(words); i++ {
			if k.verbs.has(words[i]) || k.inflectedVerb(raw, i) {
				verb = i
				break
			}
		}
	}
	return pascal(words[head]), head, verb
}

// inflectedVerb reports whether raw[i] is an -s or past form of a common
// verb used as one: "reports to", "defaults to", "lives in", but not
// "calls are" or "run 3" (nouns).
func (k *Keyer) inflectedVerb(raw []string, i int) bool {
	w := raw[i]
	if !singleValued[w] && !otherVerbs[w] {
		return false
	}
	if !strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ed") && !irregular[w] {
		return false
	}
	if i+1 < len(raw) {
		next := raw[i+1]
		if k.verbs.has(next) || k.neg.has(next) || isDigit(next[0]) {
			return false
		}
	}
	return true
}

// slotVerb returns the position of a single-valued verb that names the
// slot of a one-word subject ("Alice reports to", "the lease ends on", "the
// bike is parked in"), or -1. A copula followed by its value ("Ahmed is a
// nurse", "Ahmed is allergic to ...") names none: the value tells the slot.
func (k *Keyer) slotVerb(words, raw []string, head, verb int) int {
	if head < 0 || verb <= head {
		return -1
	}
	sv := verb
	if copulas[raw[verb]] {
		sv = verb + 1
		if sv >= len(raw) || copulas[raw[sv]] || !singleValued[raw[sv]] {
			return -1
		}
	}
	if !singleValued[raw[sv]] && !singleValued[words[sv]] {
		return -1
	}
	return sv
}

// copulas link a subject to its value.
var copulas = map[string]bool{"is": true, "are": true, "was": true, "were": true, "am": true, "be": true, "been": true}

// slotPhrase reports whether the statement names a slot in its subject
// phrase: two or more salient words before a copula or a single-valued
// verb, under a subject that is not the speaker or an instruction.
func (k *Keyer) slotPhrase(words, raw []string, head, verb int) bool {
	if head < 0 || verb <= head || !(singleValued[raw[verb]] || singleValued[words[verb]]) {
		return false
	}
	n := 0
	for _, w := range words[:verb] {
		if k.salient(w) && !k.generic.has(w) {
			n++
		}
	}
	return n >= 2
}

// salient reports whether w may name a subject or qualifier.
func (k *Keyer) salient(w string) bool {
	if w == "" || k.stop.has(w) || k.verbs.has(w) || k.neg.has(w) || k.self.has(w) || k.banned.has(w) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLetter(r) && pascal(w) != ""
}

// qualifier picks up to two salient words after skipping the subject head,
// imperatives, generic words and the chosen aspect's cues.
func (k *Keyer) qualifier(words []string, head, aspect int, negated bool) []string {
	var cues set
	if aspect >= 0 {
		cues = newSet(k.aspects[aspect].Cues)
	}
	var out []string
	for i, w := range words {
		if i == head || !k.salient(w) || k.imper.has(w) || k.generic.has(w) || cues.has(w) {
			continue
		}
		if len(out) == 0 && negated {
			if a, ok := k.ant[w]; ok {
				return []string{a}
			}
		}
		out = append(out, w)
		if len(out) == 2 {
			break
		}
	}
	return out
}

// assemble joins the parts, drops banned words and cuts to the maximum
// length: first the second qualifier word goes, then the longest part is
// shortened one character at a time.
func (k *Keyer) assemble(subject, aspect string, qual []string) string {
	var q []string
	for _, w := range qual {
		if p := pascal(w); p != "" && !k.banned.has(strings.ToLower(w)) {
			q = append(q, p)
		}
	}
	if len(q) == 0 {
		q = []string{k.fallback.Qualifier}
	}
	if k.banned.has(strings.ToLower(subject)) || subject == "" {
		subject = k.fallback.Subject
	}
	parts := [3]string{subject, aspect, strings.Join(q, "")}
	if len(parts[0])+len(parts[1])+len(parts[2])+2 > k.max && len(q) > 1 {
		parts[2] = q[0]
	}
	for len(parts[0])+len(parts[1])+len(parts[2])+2 > k.max {
		longest := 0
		for i := range parts {
			if len(parts[i]) > len(parts[longest]) {
				longest = i
			}
		}
		if len(parts[longest]) <= 1 {
			break
		}
		parts[longest] = parts[longest][:len(parts[longest])-1]
	}
	return parts[0] + "-" + parts[1] + "-" + parts[2]
}

// pascal turns a word into a PascalCase part of ASCII letters and digits:
// "dark" -> "Dark", "v1.2" -> "V12". Non-ASCII letters are dropped so keys
// stay ASCII.
func pascal(w string) string {
	var b strings.Builder
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
			if b.Len() == 0 {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
