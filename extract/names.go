package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The word lists the name finder reads; lexicon/README.md says where they
// come from and how to rebuild them.
//
//go:embed lexicon/*.txt.gz
var lexiconFS embed.FS

// NER finds proper names (people, organisations, places and other named
// things) in text by capitalisation, a dictionary of common English words,
// lists of given names and places, and cue words. It replaced prose's
// model, which took most capitalised words for places and missed many
// names (see docs/extraction.md). It is safe for concurrent use.
type NER struct {
	*lexicon
}

// lexicon holds the embedded word lists, read once per process: they are
// immutable once read, so every NER shares them.
type lexicon struct {
	dict   map[string]uint8 // lower-case dictionary words: wordCommon, plus wordCore for the commoner
	given  map[string]bool  // given names, as written ("Caroline")
	places map[string]bool  // countries, continents, US states, large cities
}

// Bits of lexicon.dict.
const (
	wordCommon uint8 = 1 << iota
	wordCore
)

var loadLexicon = sync.OnceValue(readLexicon)

// readLexicon reads the embedded word lists.
func readLexicon() *lexicon {
	l := &lexicon{dict: map[string]uint8{}, given: map[string]bool{}, places: map[string]bool{}}
	readList("common", func(w string) { l.dict[w] |= wordCommon })
	readList("core", func(w string) { l.dict[w] |= wordCore })
	readList("given", func(w string) { l.given[w] = true })
	readList("places", func(w string) { l.places[w] = true })
	return l
}

// NewNER returns a name finder. The first call in a process reads the
// embedded word lists (tens of milliseconds); later calls share them.
func NewNER() *NER { return &NER{loadLexicon()} }

// readList calls add with each entry of one embedded list. The lists are
// compiled in, so a failure is a broken build, not bad input.
func readList(name string, add func(string)) {
	raw, err := lexiconFS.ReadFile("lexicon/" + name + ".txt.gz")
	if err != nil {
		panic("extract: embedded list " + name + ": " + err.Error())
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		panic("extract: embedded list " + name + ": " + err.Error())
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if w := sc.Text(); w != "" {
			add(w)
		}
	}
	if err := sc.Err(); err != nil {
		panic("extract: embedded list " + name + ": " + err.Error())
	}
}

// name is one name found: its byte span and type.
type name struct {
	s, e int
	typ  string
}

// word is one word of the text with what the name finder needs to know of
// its surroundings.
type word struct {
	s, e    int
	text    string
	start   bool // first word of a sentence, line or list item
	heading bool // on a markdown heading line
	newline bool // a line break lies between this word and the one before
	gap     string
}

// words splits text into words: letters and digits, joined across single
// inner apostrophes, hyphens, dots and ampersands (O'Brien, Kinkaku-ji,
// Node.js, AT&T). gap is the text between a word and the one before it.
func words(text string) []word {
	var out []word
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	start, prevEnd := -1, 0
	heading := false
	lineStart := true
	for i := 0; i <= len(text); {
		r, size := rune(0), 1
		if i < len(text) {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		inner := false
		if start >= 0 && i < len(text) && (r == '\'' || r == '’' || r == '-' || r == '.' || r == '&') {
			nr, _ := utf8.DecodeRuneInString(text[i+size:])
			inner = i+size < len(text) && isWord(nr)
		}
		switch {
		case i < len(text) && (isWord(r) || inner):
			if start < 0 {
				start = i
			}
		case start >= 0:
			gap := text[prevEnd:start]
			t := word{s: start, e: i, text: text[start:i], gap: gap, heading: heading}
			t.newline = strings.ContainsAny(gap, "\n\r")
			t.start = lineStart || t.newline || sentenceBreak(out, gap)
			out = append(out, t)
			start, prevEnd, lineStart = -1, i, false
		}
		if r == '\n' {
			heading = strings.HasPrefix(text[i+1:], "#")
			lineStart = true
		}
		if i == 0 && strings.HasPrefix(text, "#") {
			heading = true
		}
		i += size
	}
	return out
}

// sentenceBreak reports whether gap, the text between the last word of
// out and the next, ends a sentence or opens a clause that starts with a
// capital anyway (after a colon, a quote, a bullet).
func sentenceBreak(out []word, gap string) bool {
	g := strings.TrimSpace(gap)
	if g == "" {
		return false
	}
	if strings.ContainsAny(g, "!?:;\"“(*•>") || strings.HasPrefix(g, "- ") {
		return true
	}
	if strings.HasPrefix(g, ".") && len(out) > 0 {
		prev := out[len(out)-1].text
		// An initial or a title abbreviation does not end a sentence.
		if utf8.RuneCountInString(prev) == 1 || honorifics[prev] || abbreviations[prev] {
			return false
		}
		return true
	}
	return false
}

// Word classes of the name finder.
var (
	// connectors join capitalised words into one name: University of
	// Toronto, Leonardo da Vinci, Lord of the Rings.
	connectors = wordSet("of", "the", "de", "da", "di", "del", "della", "van", "von", "der", "den", "du", "la", "le", "y", "&")
	articles   = wordSet("The", "A", "An")
	// honorifics and kinship titles before a name make it a person; they
	// are not part of the name.
	honorifics = wordSet("Mr", "Mrs", "Ms", "Miss", "Dr", "Prof", "Professor", "Sir", "Dame", "Lady", "Lord", "Coach",
		"Uncle", "Aunt", "Auntie", "Captain", "Capt", "Judge", "Officer", "Detective", "Rev", "Reverend", "President",
		"Senator", "Governor", "Mayor", "Sgt", "Sergeant", "Cousin", "Grandma", "Grandpa")
	// kinship words written as a name ("Call Mom") are a person.
	kinship       = wordSet("Mom", "Mum", "Dad", "Mommy", "Daddy", "Grandma", "Grandpa", "Granny", "Nana", "Papa", "Mama", "Grandmother", "Grandfather")
	abbreviations = wordSet("St", "Mt", "Inc", "Co", "Corp", "Ltd", "Jr", "Sr", "Bros", "vs", "No")
	// dates are not names: weekdays, months, holidays.
	dates = wordSet("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
		"Mon", "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun",
		"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
		"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
		"Christmas", "Xmas", "Easter", "Thanksgiving", "Halloween", "Hanukkah", "Ramadan", "Diwali", "Eid", "Passover",
		"New Year", "Year", "Years", "Eve", "Q1", "Q2", "Q3", "Q4", "AM", "PM", "UTC", "GMT")
	// stopCaps are capitalised words that start sentences but are no names
	// and that the dictionary does not list: pronouns, interjections,
	// informal words.
	stopCaps = wordSet("I", "I'm", "I've", "I'd", "I'll", "OK", "Ok", "Okay", "Congrats", "Yeah", "Yep", "Nope", "Hey", "Hi",
		"Hmm", "Lol", "Omg", "Wow", "Thx", "Btw", "Fyi", "Haha", "Ha", "Oh", "Ah", "Aw", "Ugh", "Yay", "Cool", "Will", "Hope",
		"Anytime", "Wifi", "TODO", "FIXME", "NOTE", "Note", "Re", "Fwd", "Cc")
	// demonyms, nationalities and languages of people are not names in
	// mnemo's sense (the same guideline as testdata/ner/README.md).
	demonyms = wordSet("American", "Americans", "English", "British", "French", "German", "Germans", "Spanish", "Italian",
		"Mexican", "Canadian", "Chinese", "Japanese", "Korean", "Indian", "Russian", "Dutch", "Swiss", "Swedish",
		"Norwegian", "Danish", "Finnish", "Polish", "Irish", "Scottish", "Welsh", "Greek", "Turkish", "Arab", "Arabic",
		"Persian", "Jewish", "Muslim", "Christian", "Catholic", "Protestant", "Buddhist", "Hindu", "Latin", "Latino",
		"Latina", "Hispanic", "African", "Asian", "European", "Australian", "Brazilian", "Argentine", "Colombian",
		"Peruvian", "Chilean", "Cuban", "Portuguese", "Austrian", "Belgian", "Czech", "Hungarian", "Romanian",
		"Ukrainian", "Israeli", "Egyptian", "Nigerian", "Kenyan", "Ethiopian", "Vietnamese", "Thai", "Filipino",
		"Indonesian", "Pakistani", "Iranian", "Iraqi", "Saudi", "Norman", "Saxon", "Anglo", "Celtic", "Viking", "Roman",
		"Victorian", "Soviet", "Western", "Eastern", "Northern", "Southern", "Nordic", "Scandinavian", "Hebrew")
	// techAcronyms are upper-case words of technical prose that name no
	// particular thing.
	techAcronyms = wordSet("API", "APIs", "HTTP", "HTTPS", "JSON", "YAML", "XML", "HTML", "CSS", "TLS", "SSL", "SSH", "TCP",
		"UDP", "IP", "DNS", "URL", "URI", "ID", "IDs", "UUID", "CPU", "GPU", "RAM", "OS", "VM", "VMs", "CI", "CD", "PR",
		"PRs", "UI", "UX", "CLI", "SDK", "SQL", "DB", "MVCC", "OOM", "TTL", "JDBC", "HNSW", "RPC", "REST", "CRUD",
		"ACID", "WAL", "FTS", "LRU", "TCP/IP", "IO", "I/O", "EOF", "UTF", "ASCII", "PDF", "CSV", "ETA", "FAQ", "ASAP",
		"FYI", "N/A", "KPI", "ROI", "CEO", "CTO", "CFO", "VP", "HR", "QA", "SRE", "SLA", "SLO", "MVP", "POC", "DIY",
		"TV", "DM", "DMs", "PhD", "MBA", "BA", "BS", "MS", "USB", "SSD", "HDD", "LAN", "VPN", "GB", "MB", "KB", "TB",
		"LGBTQ", "LGBT", "RSVP", "PS", "PTO")
	// orgWords in a name make it an organisation.
	orgWords = wordSet("Inc", "Inc.", "Corp", "Corporation", "Company", "Co", "Ltd", "LLC", "University", "College",
		"School", "Institute", "Foundation", "Association", "Agency", "Organization", "Organisation", "Bank",
		"Records", "Labs", "Laboratory", "Laboratories", "Group", "Club", "FC", "Party", "Council", "Committee",
		"Senate", "Congress", "Parliament", "Museum", "Library", "Church", "Hospital", "Studios", "Airlines", "Press",
		"Institution", "Bros", "Society", "Ministry", "Department", "Commission", "Elementary", "Academy",
		"Federation", "Technologies", "Motors", "Partners", "Industries", "Holdings", "Nations", "Team", "Band",
		"Orchestra", "Systems", "Dental", "Clinic", "Bureau", "Authority", "Court", "Army", "Navy", "Police")
	// placeLast and placeFirst words make a name a place.
	placeLast = wordSet("River", "Lake", "Mountain", "Mountains", "Street", "St", "Avenue", "Ave", "Road", "Rd", "Park",
		"Bay", "Ocean", "Sea", "Island", "Islands", "Valley", "Bridge", "Tower", "Square", "County", "City", "Desert",
		"Falls", "Canyon", "Reef", "Beach", "Peninsula", "Gulf", "Coast", "Hills", "Forest", "Palace", "Castle",
		"Cathedral", "Temple", "Stadium", "Airport", "Station", "Boulevard", "Lane", "Heights", "Harbor", "Harbour",
		"Strait", "Glacier", "Volcano", "Province", "Region", "District", "Village", "Town", "Center", "Centre",
		"Theatre", "Theater", "Hall", "Plaza", "Mall", "Garden", "Gardens", "Empire", "Kingdom", "Republic", "States")
	placeFirst = wordSet("Lake", "Mount", "Mt", "Cape", "Fort", "Port", "Isle", "Gulf", "Lake", "Mount", "Sierra", "Rio")
	// placePreps before an ambiguous single word (Austin, Florence) make it
	// a place.
	placePreps = wordSet("in", "at", "from", "to", "near", "around", "across", "into", "through", "outside", "inside",
		"visit", "visited", "visiting", "toward", "towards", "via", "of")
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// capitalised reports whether a word can be part of a name: it starts with
// an upper-case letter, or has one inside (iPhone, eBay).
func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	if unicode.IsUpper(r) {
		return true
	}
	if !unicode.IsLower(r) {
		return false
	}
	return strings.IndexFunc(w, unicode.IsUpper) > 0
}

// allCaps reports an upper-case word of two or more letters (NASA, TODO).
func allCaps(w string) bool {
	n := 0
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n >= 2
}

// codeWord is a word the code pattern takes when it stands alone
// (ReplicaSet, dataSource); MySQL and RabbitMQ are names.
var codeWord = regexp.MustCompile(`^(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)$`)

// stripPossessive drops a trailing 's (Caroline's).
func stripPossessive(w string) string {
	for _, p := range []string{"'s", "’s"} {
		if strings.HasSuffix(w, p) && len(w) > len(p) {
			return strings.TrimSuffix(w, p)
		}
	}
	return w
}

// isDate reports a weekday, month or holiday, also in the plural
// (Fridays).
func isDateWord(w string) bool {
	return dates[w] || (strings.HasSuffix(w, "s") && dates[strings.TrimSuffix(w, "s")])
}

// common reports a word the dictionary knows in lower case and that is
// neither a given name nor a place.
func (n *NER) common(w string) bool {
	return n.commonWord(w) && !n.given[w] && !n.places[w]
}

func (n *NER) commonWord(w string) bool { return n.dict[strings.ToLower(w)]&wordCommon != 0 }

// coreWord reports one of the commoner dictionary words.
func (n *NER) coreWord(w string) bool { return n.dict[strings.ToLower(w)]&wordCore != 0 }

// breaks reports whether t can be no part of a name wherever it stands: a
// date, a stop word, a technical acronym, an all-caps common word (VACUUM,
// NOTE), or on a heading line a common word.
func (n *NER) breaks(t word) bool {
	w := stripPossessive(t.text)
	switch {
	case isDateWord(w), stopCaps[w], techAcronyms[w]:
		return true
	case allCaps(w) && n.commonWord(w):
		return true
	case t.heading && n.common(w):
		return true
	}
	return false
}

// demonym reports a nationality, people or language (English,
// Anglo-Saxon): alone it is no name, though it may begin one (European
// Space Agency).
func demonym(w string) bool {
	for _, part := range strings.Split(w, "-") {
		if !demonyms[part] {
			return false
		}
	}
	return true
}

// dropAtStart reports whether the first word of a sentence is a common
// word rather than a name. A core word always is ("My", "Long", "Apple"
// alone); a rarer dictionary word is unless it is also a given name or a
// place. next is the capitalised word that follows in the same run, if
// any: a common word before a common word or a name's suffix is taken for
// part of a title or name ("Harry Potter", "Apple Inc", "Golden Gate
// Bridge"), before anything else for an imperative or the like ("Ask
// Tom", "Call Mom").
func (n *NER) dropAtStart(w, next string) bool {
	if utf8.RuneCountInString(w) < 2 || kinship[w] || honorifics[w] {
		return false
	}
	if base, _, ok := strings.Cut(strings.ReplaceAll(w, "’", "'"), "'"); ok && n.coreWord(base) {
		return true // We're, You'd, Don't
	}
	if !n.coreWord(w) && !n.common(w) {
		return false
	}
	if next == "" {
		return true
	}
	next = stripPossessive(next)
	if placeFirst[w] || orgWords[w] || (n.given[w] && !n.commonWord(next)) {
		return false // Lake Victoria, University of Toronto, Peter Jackson
	}
	suffix := orgWords[next] || placeLast[next]
	return !(suffix || (n.commonWord(next) && !n.given[next] && !kinship[next]))
}

// techWords are words of technical prose: in a sentence that has one, a
// name that no other cue types is taken for a tool ("Redis keeps the
// session cache").
var techWords = wordSet("api", "apis", "cluster", "clusters", "container", "containers", "pod", "pods", "node",
	"nodes", "server", "servers", "database", "databases", "query", "queries", "index", "indexes", "cache", "caches",
	"deploy", "deploys", "deployed", "build", "builds", "commit", "commits", "branch", "rebase", "merge", "package",
	"packages", "module", "modules", "library", "libraries", "install", "installed", "config", "configure",
	"kernel", "thread", "threads", "process", "processes", "runtime", "compiler", "compiles", "binary", "plugin",
	"plugins", "schema", "table", "tables", "replica", "replication", "partition", "partitions", "topic", "topics",
	"consumer", "consumers", "broker", "message", "messages", "queue", "queues", "metrics", "dashboard",
	"dashboards", "traces", "logs", "endpoint", "endpoints", "request", "requests", "proxy", "proxies", "sidecar",
	"namespace", "manifest", "manifests", "charts", "playbooks", "hosts", "notebooks", "garbage", "memory", "cpu",
	"tls", "ssh", "http", "json", "yaml", "sql", "jdbc", "ttl", "ci", "backup", "backups", "version", "versions",
	"release", "repository", "repo", "script", "scripts", "framework", "frameworks", "inverted",
	"columns", "compresses", "quorum", "consistency", "virtual", "rebuild", "image", "images",
	"dependencies", "artifact", "refactoring", "completion", "editors", "fork", "licence",
	"license", "open-source", "source", "code", "programming", "language", "developer", "developers", "typed",
	"component", "components", "props", "safety", "ownership", "borrowing", "collector")

// find returns the names of text that overlap no taken span, in text
// order, the byte offsets where sentences start, and the sentences (by
// index) that use technical words. A name whose type no cue gives has type
// "": the caller types it by the company it keeps.
func (n *NER) find(text string, taken spans) ([]name, []int, map[int]bool) {
	toks := words(text)
	var (
		out    []name
		starts []int
		tech   = map[int]bool{}
	)
	for _, t := range toks {
		if t.start || len(starts) == 0 {
			starts = append(starts, t.s)
		}
		if techWords[strings.ToLower(t.text)] || techAcronyms[t.text] {
			tech[len(starts)-1] = true
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !capitalised(t.text) || taken.overlaps(t.s, t.e) {
			continue
		}
		j := i
		for j+1 < len(toks) {
			k := j + 1
			next := toks[k]
			if next.start || !joins(next.gap) || taken.overlaps(next.s, next.e) {
				break
			}
			if capitalised(next.text) && !n.breaks(next) && !n.breaks(toks[j]) {
				j = k
				continue
			}
			connector := connectors[next.text] || (next.text == "for" && orgWords[toks[j].text])
			if connector && k+1 < len(toks) && !toks[k+1].start && joins(toks[k+1].gap) &&
				capitalised(toks[k+1].text) && !taken.overlaps(toks[k+1].s, toks[k+1].e) && !n.breaks(toks[k+1]) {
				j = k + 1
				continue
			}
			break
		}
		out = append(out, n.names(text, toks, i, j)...)
		i = j
	}
	return out, starts, tech
}

// maxNameWords is the most words of a name ("One Hundred Years of Solitude"
// is five); a longer run of capitalised words is title-case text or a list
// without commas, not one name.
const maxNameWords = 6

// joins reports whether the gap between two words lets them be one name:
// a single space, or the dot and space after an initial.
func joins(gap string) bool { return gap == " " || gap == ". " }

// names turns the run of capitalised words toks[i..j] into names: it drops
// sentence-initial common words, articles, honorifics and non-names, and
// types what is left.
func (n *NER) names(text string, toks []word, i, j int) []name {
	person := false
	// Split the run at words that are no part of any name; a run longer
	// than any name is title-case text (a title, a heading written inline),
	// split at its common words as a heading line is.
	titleCase := j-i+1 > maxNameWords
	var parts [][2]int
	from := i
	for k := i; k <= j; k++ {
		if n.breaks(toks[k]) || (titleCase && n.commonWord(stripPossessive(toks[k].text)) && !n.places[stripPossessive(toks[k].text)]) {
			if from < k {
				parts = append(parts, [2]int{from, k - 1})
			}
			from = k + 1
		}
	}
	if from <= j {
		parts = append(parts, [2]int{from, j})
	}
	var out []name
	for _, p := range parts {
		a, b := p[0], p[1]
		for a <= b {
			w := toks[a].text
			next := ""
			if a < b && capitalised(toks[a+1].text) {
				next = toks[a+1].text
			}
			switch {
			case toks[a].start && n.dropAtStart(stripPossessive(w), next) && !n.speaker(text, toks, a, b):
				a++
				continue
			case articles[w]:
				a++
				continue
			case honorifics[w] && a < b:
				person = true
				a++
				continue
			}
			break
		}
		for a <= b && connectors[toks[a].text] {
			a++
		}
		for a <= b && connectors[toks[b].text] {
			b--
		}
		if a > b {
			continue
		}
		s, e := toks[a].s, toks[b].e
		last := stripPossessive(toks[b].text)
		e -= len(toks[b].text) - len(last)
		// A lone letter is no name, a lone camel-case word that the code
		// pattern takes is code, a lone demonym an adjective; a name is at
		// most maxNameWords words.
		if a == b && (utf8.RuneCountInString(last) < 2 || codeWord.MatchString(last) || demonym(last)) {
			continue
		}
		if b-a+1 > maxNameWords {
			continue
		}
		typ := n.typeOf(text, toks, a, b, last, person)
		out = append(out, name{s: s, e: e, typ: typ})
	}
	return out
}

// speaker reports a name that opens a line and is followed by a colon:
// the speaker of a conversation turn ("Caroline: ..."), unless it is a
// common word ("Idea: ...", "Remember: ...").
func (n *NER) speaker(text string, toks []word, a, b int) bool {
	w := toks[a].text
	return (a == 0 || toks[a].newline) && b-a < 3 && strings.HasPrefix(strings.TrimLeft(text[toks[b].e:], " "), ":") &&
		(n.given[w] || !n.coreWord(w))
}

// Context words that make a name a person: the word before ("my cousin
// Priya", "a husky named Pixie") or after ("Priya recommended").
var (
	personBefore = wordSet("named", "called", "cousin", "sister", "brother", "friend", "wife", "husband", "son",
		"daughter", "mother", "father", "mom", "dad", "boss", "colleague", "neighbor", "neighbour", "partner",
		"girlfriend", "boyfriend", "aunt", "uncle", "nephew", "niece", "grandson", "granddaughter", "teacher",
		"coach", "manager", "author", "singer", "actor", "actress", "director", "painter", "composer", "engineer",
		"artist", "writer", "novelist", "poet", "physicist", "chemist", "mathematician", "founder", "ceo", "player")
	personAfter = wordSet("said", "says", "told", "tells", "asked", "asks", "wrote", "writes", "born", "died",
		"married", "painted", "composed", "recommended", "recommends", "prefers", "thinks", "thought", "loves",
		"likes", "wants", "wanted", "feels", "felt", "replied", "mentioned", "suggested", "agreed", "promised")
	// orgBefore and placeBefore: "at Google", "in Evanston".
	orgBefore   = wordSet("at", "on", "from", "joined", "join", "joins", "employer", "company")
	placeBefore = wordSet("in", "near", "into", "across", "throughout", "outside", "visit", "visited", "visiting",
		"toward", "towards", "around")
)

// typeOf types the name toks[a..b] (its last word without possessive is
// last), or returns "" when no cue says.
func (n *NER) typeOf(text string, toks []word, a, b int, last string, person bool) string {
	first := stripPossessive(toks[a].text)
	whole := last
	if b > a {
		whole = text[toks[a].s:toks[b].s] + last
	}
	prev, after := "", ""
	if a > 0 && !toks[a].start {
		prev = strings.ToLower(toks[a-1].text)
	}
	if b+1 < len(toks) && toks[b+1].gap == " " && last == toks[b].text {
		after = strings.ToLower(toks[b+1].text)
	}
	initials := false
	for k := a; k < b; k++ {
		initials = initials || (utf8.RuneCountInString(toks[k].text) == 1 && toks[k+1].gap == ". ")
	}
	switch {
	case person, kinship[whole], initials, n.speaker(text, toks, a, b):
		return "person"
	}
	for k := a; k <= b; k++ {
		if orgWords[strings.TrimSuffix(toks[k].text, ".")] {
			return "org"
		}
	}
	if placeFirst[first] && a < b {
		return "place"
	}
	if n.places[whole] {
		if !n.given[whole] || placePreps[prev] || strings.TrimSpace(toks[a].gap) == "," {
			return "place"
		}
		return "person"
	}
	if n.given[first] && a < b && !placeLast[last] && (!n.coreWord(last) || n.given[last]) {
		return "person" // Jane Austen, not Spring Boot
	}
	if n.places[first] && a < b && !placeLast[last] {
		return "org" // Minnesota Timberwolves, Boston Globe
	}
	if placeLast[last] {
		return "place"
	}
	if n.given[first] || personBefore[prev] || personAfter[after] {
		return "person"
	}
	if b > a && b-a < 3 {
		unknown := true
		for k := a; k <= b; k++ {
			w := toks[k].text
			unknown = unknown && !n.commonWord(w) && !allCaps(w) && !strings.ContainsFunc(w, unicode.IsDigit)
		}
		if unknown { // "Thom Yorke", "Krist Novoselic"
			return "person"
		}
	}
	if a == b && allCaps(last) {
		return "org"
	}
	if placeBefore[prev] {
		return "place"
	}
	if orgBefore[prev] {
		return "org"
	}
	return ""
}
