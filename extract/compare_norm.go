package extract

import (
	"regexp"
	"strings"
)

// Quantities are written many ways: "21 degrees" and "21°C", "64GB" and
// "64 GB", "30s" and "30 seconds", "at most 64 GB" and "up to 64 GB". Before
// two statements are compared, each is rewritten to one spelling, so that
// only a change of value tells them apart.

// boundRE matches an upper or lower bound in front of a number.
var (
	upperBoundRE = regexp.MustCompile(`(?i)\b(?:up to|at most|at the most|no more than|not more than|a maximum of|maximum of|max\.?)\s+(\d)`)
	lowerBoundRE = regexp.MustCompile(`(?i)\b(?:at least|no less than|not less than|no fewer than|a minimum of|minimum of|min\.)\s+(\d)`)
)

// degreeRE matches a temperature's unit after a number: °C, ° C, ºF, °.
var degreeRE = regexp.MustCompile(`(\d)\s*[°º]\s*([CcFf])?\b`)

// units maps a unit's spellings to one; each is matched lower case.
var units = map[string]string{
	"ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "millisecond": "milliseconds",
	"s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds",
	"min": "minutes", "mins": "minutes", "minute": "minutes",
	"h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours",
	"kilobyte": "kb", "kilobytes": "kb", "megabyte": "mb", "megabytes": "mb", "gigabyte": "gb", "gigabytes": "gb",
	"terabyte": "tb", "terabytes": "tb",
	"kms": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km",
	"kgs": "kg", "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg",
	"deg": "degrees", "degs": "degrees", "degree": "degrees",
}

// frequencies are adverbs of frequency, folded to the noun that "every"
// takes: "nightly" says "every night".
var frequencies = map[string]string{
	"hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week", "fortnightly": "fortnight",
	"monthly": "month", "quarterly": "quarter", "yearly": "year", "annually": "year",
}

// prepositionFolds are prepositions that say what a shorter one does.
var prepositionFolds = map[string]string{"inside": "in", "within": "in"}

// nameParticles join the parts of a name: "Pieter de Vries", "Ludwig van
// Beethoven", "Ibn Battuta".
var nameParticles = map[string]bool{
	"de": true, "del": true, "della": true, "der": true, "den": true, "di": true, "da": true, "dos": true,
	"das": true, "du": true, "la": true, "le": true, "van": true, "von": true, "ter": true, "ten": true,
	"bin": true, "ibn": true, "al": true, "el": true,
}

// standardQuantities rewrites bounds, temperatures and units to one
// spelling each.
func standardQuantities(s string) string {
	if !strings.ContainsAny(s, "0123456789") {
		return s
	}
	if lower := strings.ToLower(s); strings.Contains(lower, "up to") || strings.Contains(lower, "most") ||
		strings.Contains(lower, "than") || strings.Contains(lower, "max") || strings.Contains(lower, "least") ||
		strings.Contains(lower, "min") {
		s = upperBoundRE.ReplaceAllString(s, "max $1")
		s = lowerBoundRE.ReplaceAllString(s, "min $1")
	}
	if strings.ContainsAny(s, "°º") {
		s = degreeRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := degreeRE.FindStringSubmatch(m)
			if sub == nil {
				// The match ended at a word boundary its context gave
				// ("45°N": after "°", the "N"); alone it does not match
				// again. Not a temperature: keep it.
				return m
			}
			switch strings.ToLower(sub[2]) {
			case "c":
				return sub[1] + " degrees celsius"
			case "f":
				return sub[1] + " degrees fahrenheit"
			}
			return sub[1] + " degrees"
		})
	}
	return standardUnits(s)
}

// standardUnits writes the unit after a number, attached or not, in one
// spelling: "64GB", "64 gigabytes" -> "64 gb"; "30s", "30 secs" -> "30
// seconds".
func standardUnits(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || i > 0 && isWordByte(s[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && (s[j] == '.' || s[j] == ',') && isDigit(s[j+1]) {
			for j++; j < len(s) && isDigit(s[j]); j++ {
			}
		}
		k := j
		for k < len(s) && s[k] == ' ' {
			k++
		}
		e := k
		for e < len(s) && isLetter(s[e]) {
			e++
		}
		if e == k || e < len(s) && isWordByte(s[e]) {
			i = j
			continue
		}
		u := strings.ToLower(s[k:e])
		c, ok := units[u]
		if !ok {
			if !unitNames[u] {
				i = e
				continue
			}
			c = u
		}
		b.WriteString(s[last:j])
		b.WriteString(" " + c)
		last, i = e, e
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// unitNames are the units already in their one spelling.
var unitNames = map[string]bool{
	"milliseconds": true, "seconds": true, "minutes": true, "hours": true, "kb": true, "kib": true, "mb": true,
	"mib": true, "gb": true, "gib": true, "tb": true, "tib": true, "km": true, "kg": true, "degrees": true,
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWordByte(c byte) bool { return isDigit(c) || isLetter(c) || c == '_' || c >= 0x80 }

// joinNames marks the particles inside a name as part of it: in "Pieter de
// Vries", "de" is a name's word, not a plain one.
func joinNames(toks []token) {
	for i := 1; i+1 < len(toks); i++ {
		if nameParticles[toks[i].w] && isName(toks[i-1]) && isName(toks[i+1]) {
			toks[i].dist, toks[i].stop, toks[i].verb = true, false, false
		}
	}
}

// isName reports whether t is a proper name: told apart, no digits.
func isName(t token) bool { return t.dist && !t.id && !strings.ContainsAny(t.w, "0123456789") }
