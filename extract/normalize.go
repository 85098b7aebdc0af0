package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fluffRE matches hedges and fillers that carry no meaning, with a comma
// that follows them. Negations are never in this list.
var fluffRE = regexp.MustCompile(`(?i)\b(?:` + strings.Join([]string{
	`i think`, `i guess`, `i suppose`, `i feel like`, `i mean`,
	`maybe`, `perhaps`, `basically`, `actually`, `literally`, `honestly`,
	`you know`, `to be honest`, `just`, `really`, `totally`, `pretty much`,
	`um+`, `uh+`, `erm`, `hmm+`, `ok so`, `okay so`, `so yeah`, `anyway`,
}, "|") + `)\b,?`)

// hedgeOfRE matches "kind of" / "sort of"; a preceding determiner ("what
// kind of database") makes it meaningful, see dropHedgeOf.
var hedgeOfRE = regexp.MustCompile(`(?i)\b(\w+\s+)?(?:kind|sort) of\b`)

// likeRE matches "like" used as a filler: set off by commas, opening a
// sentence with a comma, or before a number ("like 5 errors").
var likeRE = regexp.MustCompile(`(?i)(,\s*like\b,?|\blike,|\blike\s+(?:\d))`)

// protectedRE matches spans left untouched: fenced code, inline code, URLs
// and paths.
var protectedRE = regexp.MustCompile("(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)|`[^`\n]*`|[a-zA-Z][a-zA-Z0-9+.-]*://\\S+|\\S*[/\\\\]\\S*")

var determiners = map[string]bool{
	"what": true, "a": true, "the": true, "this": true, "that": true, "any": true,
	"some": true, "which": true, "one": true, "same": true, "every": true, "each": true, "no": true,
}

// Normalize drops conversational fluff (hedges such as "I think" and
// "maybe", fillers such as "basically", "you know", "just", "like" used as
// a filler) while keeping meaning, negation and numbers, and collapses
// whitespace: runs of spaces become one space, lines are trimmed and blank
// lines collapse to one. Code, URLs and paths are left as they are.
func Normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, loc := range protectedRE.FindAllStringIndex(text, -1) {
		b.WriteString(normalizeProse(text[last:loc[0]]))
		b.WriteString(text[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(normalizeProse(text[last:]))
	return collapseSpace(b.String())
}

func normalizeProse(s string) string {
	if s == "" {
		return s
	}
	s = likeRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, ",") {
			return ","
		}
		if d := strings.TrimLeft(strings.ToLower(m), "like\t "); d != "" && d != "," {
			return d // keep the number
		}
		return ""
	})
	s = fluffRE.ReplaceAllStringFunc(s, marker)
	s = hedgeOfRE.ReplaceAllStringFunc(s, dropHedgeOf)
	return unmark(s)
}

// Dropped fluff leaves a marker: markUpper when it was capitalized (so the
// word now opening the sentence is capitalized in turn), markLower else.
const (
	markLower = '\x00'
	markUpper = '\x01'
)

func marker(m string) string {
	if r, _ := utf8.DecodeRuneInString(m); unicode.IsUpper(r) {
		return string(markUpper)
	}
	return string(markLower)
}

func dropHedgeOf(m string) string {
	sub := hedgeOfRE.FindStringSubmatch(m)
	if w := strings.TrimSpace(sub[1]); w != "" && determiners[strings.ToLower(w)] {
		return m
	}
	if sub[1] == "" {
		return marker(m)
	}
	return sub[1] + string(markLower)
}

// unmark removes the markers with the spaces and commas that follow them,
// capitalizing the next word after a markUpper.
func unmark(s string) string {
	if !strings.ContainsAny(s, string(markLower)+string(markUpper)) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != markLower && c != markUpper {
			b.WriteByte(c)
			i++
			continue
		}
		upper := c == markUpper
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == ',' || s[j] == markLower || s[j] == markUpper) {
			upper = upper || s[j] == markUpper
			j++
		}
		if upper && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			b.WriteRune(unicode.ToUpper(r))
			j += size
		} else if b.Len() > 0 && j < len(s) && s[j] != '.' && s[j] != '\n' {
			b.WriteByte(' ')
		}
		i = j
	}
	return b.String()
}

var (
	spaceRunRE = regexp.MustCompile(`[ \t\f\v]+`)
	spaceBefRE = regexp.MustCompile(` ([,.;:!?])(\s|$)`)
	commaRunRE = regexp.MustCompile(`,(?:\s*,)+`)
	lineEdgeRE = regexp.MustCompile(`(?m)^[ \t,]+|[ \t]+$`)
	blankRunRE = regexp.MustCompile(`\n{3,}`)
)

func collapseSpace(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = spaceRunRE.ReplaceAllString(s, " ")
	s = commaRunRE.ReplaceAllString(s, ",")
	s = spaceBefRE.ReplaceAllString(s, "$1$2")
	s = lineEdgeRE.ReplaceAllString(s, "")
	s = blankRunRE.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
