package extract

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mnemo-dev/mnemo/policy"
)

// Mention is one entity found in a text. A text yields at most one mention
// per concept (per NormName).
type Mention struct {
	// Name is the canonical name: the gazetteer name when the gazetteer
	// knows the entity, else the text as written.
	Name string
	// NormName is NormName(Name).
	NormName string
	// Type is an entity type of the policy (tool, person, code, ...).
	Type string
	// Aliases are the gazetteer's aliases, plus the surface form when it
	// differs from Name.
	Aliases []string
	// Source says what found it: gazetteer, pattern or ner.
	Source string
	// Start and End are the byte offsets of the first occurrence.
	Start, End int
}

// Mention sources.
const (
	SourceGazetteer = "gazetteer"
	SourcePattern   = "pattern"
	SourceNER       = "ner"
)

// pattern finds one kind of entity by regular expression; the first
// submatch, when present, is the entity.
type pattern struct {
	typ string
	re  *regexp.Regexp
}

// structural patterns run before the gazetteer so that a name inside a URL
// or path ("/srv/mnemo/data") is not taken for the entity.
var structural = []pattern{
	{"url", regexp.MustCompile(`\bhttps?://[^\s<>()\[\]"'` + "`" + `]+[^\s<>()\[\]"'.,;:!?` + "`" + `]`)},
	{"path", regexp.MustCompile(`(?:^|[\s(])((?:\.{1,2}/|~/|/)?(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+|[A-Za-z0-9_-]+\.(?:go|py|md|yaml|yml|json|ts|js|sql|toml|txt|sh|rs|java|mod|proto))\b`)},
	{"handle", regexp.MustCompile(`(?:^|[\s(])(@[A-Za-z0-9_][A-Za-z0-9_-]*)`)},
	{"tag", regexp.MustCompile(`(?:^|[\s(])(#[A-Za-z][A-Za-z0-9_/-]*)`)},
}

// lexical patterns run after the gazetteer: versions and code identifiers.
var lexical = []pattern{
	{"version", regexp.MustCompile(`\b(v\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z.]+)?|\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\b`)},
	{"code", regexp.MustCompile(`\b([a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b`)},
}

// Extractor finds entities under one policy: the gazetteer (names and
// aliases, which always win), patterns, and optionally the name finder.
// Build one per policy with NewExtractor; it is safe for concurrent use.
type Extractor struct {
	types   map[string]bool
	gaz     map[string]int // folded surface form -> gazetteer index
	exact   map[string]int // case-sensitive short names (<= 3 chars)
	maxN    int            // longest gazetteer form, in words
	entries []policy.GazetteerEntry
	ner     *NER
	keyer   *Keyer
	policy  *policy.Policy
}

// NewExtractor indexes p's gazetteer. ner may be nil to skip names (the
// gazetteer and patterns still run).
func NewExtractor(p *policy.Policy, ner *NER) *Extractor {
	x := &Extractor{
		types:   map[string]bool{},
		gaz:     map[string]int{},
		exact:   map[string]int{},
		entries: p.Entities.Gazetteer,
		ner:     ner,
		keyer:   NewKeyer(p),
		policy:  p,
	}
	for _, t := range p.Entities.Types {
		x.types[t] = true
	}
	for i, e := range p.Entities.Gazetteer {
		for _, form := range append([]string{e.Name}, e.Aliases...) {
			n := NormName(form)
			if n == "" {
				continue
			}
			// Short forms without digits ("Go", "pg") match only as
			// written: lower-case "go" is a verb, not the language.
			if len(strings.ReplaceAll(n, " ", "")) <= 3 && !strings.ContainsFunc(n, unicode.IsDigit) {
				x.exact[strings.TrimSpace(form)] = i
			} else {
				x.gaz[n] = i
			}
			if w := len(strings.Fields(n)); w > x.maxN {
				x.maxN = w
			}
		}
	}
	return x
}

// MaxNameLen is the longest entity name, in bytes, that the store takes
// (graph.MaxNameLen, which extract does not import): a longer URL or path
// is no entity, where it used to make the store refuse the whole memory.
const MaxNameLen = 256

// NERLimit is the most bytes of one text that the name finder reads; the
// gazetteer and the patterns read all of it. A long text names most of its
// own early on, and the cap bounds the cost of one text.
const NERLimit = 16 << 10

// Entities returns the entities of text, one per concept, in order of
// first occurrence. The name finder reads at most the first NERLimit
// bytes.
func (x *Extractor) Entities(text string) []Mention { return x.EntitiesNER(text, NERLimit) }

// EntitiesNER is Entities with the name finder reading at most the first
// nerBytes of text, cut back to a word boundary (none when nerBytes <= 0).
// Callers that extract many pieces of one document share one budget this
// way.
//
// The order of the steps decides who owns a span: URLs, paths, handles and
// tags first, then the gazetteer, then names, then versions and code
// identifiers (a lone "ReplicaSet" is code, "Leonardo DiCaprio" a name).
func (x *Extractor) EntitiesNER(text string, nerBytes int) []Mention {
	var out []Mention
	seen := map[string]int{}
	add := func(m Mention) {
		if m.NormName == "" || (m.Type != "" && !x.types[m.Type]) || len(m.Name) > MaxNameLen || len(m.NormName) > MaxNameLen {
			return
		}
		if i, ok := seen[m.NormName]; ok {
			out[i].Aliases = addAlias(out[i].Aliases, out[i].Name, m.Name)
			return
		}
		seen[m.NormName] = len(out)
		m.Aliases = addAlias(m.Aliases, m.Name, FoldName(m.Name))
		out = append(out, m)
	}
	claimed := x.patterns(text, structural, nil, add)
	claimed = merge(claimed, x.gazetteer(text, claimed, add))
	var (
		names  []name
		starts []int
		tech   map[int]bool
	)
	if x.ner != nil && nerBytes > 0 {
		names, starts, tech = x.ner.find(prefix(text, nerBytes), claimed)
		own := make(spans, len(names))
		for i, nm := range names {
			own[i] = [2]int{nm.s, nm.e}
		}
		claimed = merge(claimed, own)
	}
	x.patterns(text, lexical, claimed, add)
	if len(names) > 0 {
		for i := range techSentences(out, starts) {
			tech[i] = true
		}
		for _, nm := range names {
			typ := nm.typ
			if typ == "" {
				typ = "concept"
				if tech[sentenceOf(starts, nm.s)] {
					typ = "tool"
				}
			}
			surface := text[nm.s:nm.e]
			add(Mention{Name: surface, NormName: NormName(surface), Type: typ, Source: SourceNER, Start: nm.s, End: nm.e})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// techTypes are the types that make a sentence technical: there, a name
// that no cue types is most likely a tool ("Envoy", "Helm").
var techTypes = map[string]bool{"tool": true, "language": true, "project": true, "code": true, "path": true, "url": true, "version": true}

// techSentences returns the sentences (by index into starts) that mention
// an entity of a technical type.
func techSentences(ms []Mention, starts []int) map[int]bool {
	out := map[int]bool{}
	for _, m := range ms {
		if techTypes[m.Type] && m.Start >= 0 {
			out[sentenceOf(starts, m.Start)] = true
		}
	}
	return out
}

// sentenceOf returns the index of the sentence holding byte offset off.
func sentenceOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
}

// prefix returns at most the first n bytes of text, cut back to the last
// whitespace so that no word is split (or to a rune boundary when the
// prefix has no whitespace).
func prefix(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
		return cut[:i]
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// patterns adds the matches of ps that overlap no claimed span and returns
// the spans it claimed, sorted.
func (x *Extractor) patterns(text string, ps []pattern, claimed spans, add func(Mention)) spans {
	var mine spans
	for _, p := range ps {
		var found spans // in text order: FindAll's matches never overlap
		for _, loc := range p.re.FindAllStringSubmatchIndex(text, -1) {
			s, e := loc[0], loc[1]
			if len(loc) >= 4 && loc[2] >= 0 {
				s, e = loc[2], loc[3]
			}
			if claimed.overlaps(s, e) || mine.overlaps(s, e) || (p.typ == "version" && insideDotted(text, s, e)) {
				continue
			}
			found = append(found, [2]int{s, e})
			surface := text[s:e]
			norm := NormName(surface)
			if p.typ == "url" || p.typ == "path" {
				norm = strings.ToLower(surface) // separators matter here
			}
			add(Mention{Name: surface, NormName: norm, Type: p.typ, Source: SourcePattern, Start: s, End: e})
		}
		mine = merge(mine, found)
	}
	return mine
}

// insideDotted reports a match that is part of a longer dotted number such
// as the IP address 0.0.0.0.
func insideDotted(text string, s, e int) bool {
	if s > 0 && text[s-1] == '.' {
		return true
	}
	return e+1 < len(text) && text[e] == '.' && isDigit(text[e+1])
}

func addAlias(aliases []string, name, surface string) []string {
	if surface == name {
		return aliases
	}
	for _, a := range aliases {
		if a == surface {
			return aliases
		}
	}
	return append(aliases, surface)
}

// spans are disjoint byte ranges [start, end) sorted by start (and so by
// end): an overlap test is a binary search, not a scan, which kept entity
// extraction quadratic in the number of matches (a 64 KiB text of paths
// took 95 ms, 256 KiB 1.5 s).
type spans [][2]int

// overlaps reports whether [s, e) overlaps a span of sp.
func (sp spans) overlaps(s, e int) bool {
	i := sort.Search(len(sp), func(i int) bool { return sp[i][1] > s })
	return i < len(sp) && sp[i][0] < e
}

// merge returns the sorted union of two sorted, mutually disjoint span
// lists.
func merge(a, b spans) spans {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make(spans, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0][0] <= b[0][0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// lookup finds a gazetteer entry by surface form.
func (x *Extractor) lookup(surface string) (int, bool) {
	if i, ok := x.exact[strings.TrimSpace(surface)]; ok {
		return i, true
	}
	i, ok := x.gaz[NormName(surface)]
	return i, ok
}

// gazetteer matches gazetteer names and aliases on word boundaries, longest
// first, and returns the claimed spans.
func (x *Extractor) gazetteer(text string, taken spans, add func(Mention)) spans {
	if len(x.entries) == 0 {
		return nil
	}
	words := wordSpans(text)
	var claimed spans
	for i := 0; i < len(words); i++ {
		for n := min(x.maxN, len(words)-i); n >= 1; n-- {
			s, e := words[i][0], words[i+n-1][1]
			idx, ok := x.lookup(text[s:e])
			if !ok || taken.overlaps(s, e) {
				continue
			}
			g := x.entries[idx]
			m := Mention{Name: g.Name, NormName: NormName(g.Name), Type: g.Type, Source: SourceGazetteer, Start: s, End: e}
			m.Aliases = append(m.Aliases, g.Aliases...)
			m.Aliases = addAlias(m.Aliases, g.Name, text[s:e])
			add(m)
			claimed = append(claimed, [2]int{s, e})
			i += n - 1
			break
		}
	}
	return claimed
}

// wordSpans returns the byte spans of the words of text: runs of letters,
// digits, '+' and '#' (C++, C#), joined across single inner '.', '-' and
// '_' (Node.js, neo4j-db).
func wordSpans(text string) [][2]int {
	var out [][2]int
	start := -1
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' || r == '#' }
	// Offsets advance by the bytes each rune was decoded from: an invalid
	// byte decodes to U+FFFD, three bytes long when encoded again.
	for pos := 0; pos < len(text); {
		r, size := utf8.DecodeRuneInString(text[pos:])
		next, _ := utf8.DecodeRuneInString(text[pos+size:])
		inner := (r == '.' || r == '-' || r == '_') && start >= 0 && pos+size < len(text) && isWord(next)
		switch {
		case isWord(r) || inner:
			if start < 0 {
				start = pos
			}
		case start >= 0:
			out = append(out, [2]int{start, pos})
			start = -1
		}
		pos += size
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

// NormName normalises an entity name for matching: lower case, trimmed,
// punctuation folded to single spaces; '+' and '#' are kept (C++, C#).
func NormName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' || r == '#' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}

// FoldName strips the diacritics of a name ("Aschenbrödel" ->
// "Aschenbrodel"; combining marks after canonical decomposition), and
// returns an ASCII name as it is. The write path stores a name's folded
// form as an alias and search folds the names a query gives, so a query
// that writes a name without its accents links to the entity either way;
// norm names, the stored keys, keep theirs.
func FoldName(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// Result is what the write path extracts from one memory's text.
type Result struct {
	// Normalized is the text with fluff dropped.
	Normalized     string
	Classification Classification
	Entities       []Mention
	// Key is the SAQ canonical key.
	Key string
}

// Extract runs Normalize, Classify, Entities and Key on one text.
func (x *Extractor) Extract(text string, hint Hint) Result {
	norm := Normalize(text)
	return Result{
		Normalized:     norm,
		Classification: Classify(x.policy, norm, hint),
		Entities:       x.Entities(norm),
		Key:            x.keyer.keyOf(norm),
	}
}
