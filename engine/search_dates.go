package engine

import (
	"regexp"
	"strings"
)

// A query's calendar dates ("in August 2023", "on 7 July, 2023", "between
// August 11 and August 15 2023") say when, not what: a memory is dated by
// its metadata (valid_from, else created_at), and a turn of a conversation
// written on 7 July 2023 rarely says so. Embedded with the rest of the
// question, the date pulls the query vector away from what the memory says
// (the evidence of "What natural disaster affected John's old area on 7
// July, 2023?" is 0.590 from the whole question and 0.670 from the question
// without its date). contentQuery is the question without its dates: the
// relevance of a result takes the better of the two cosines, and the dates
// still count, against the memory's own date, in its keyword coverage
// (dateWords). Ranking is untouched: in a document a year is often what it
// says ("formed in 1995").
var (
	monthName = `(?:january|february|march|april|may|june|july|august|september|october|november|december|` +
		`jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?`
	dayNum   = `(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?`
	yearNum  = `(?:1[89][0-9]{2}|2[0-9]{3})`
	datePrep = `(?:in|on|during|from|since|until|till|through|by|before|after|around|between|of|and|to|-|–)`
	// A date: month and day (and year), day and month (and year), month
	// and year, or a year alone. A month name alone ("in June") counts only
	// after a preposition: "May" and "June" are also a verb and a name.
	oneDate = `(?:` + monthName + `\s+` + dayNum + `(?:\s*,?\s*` + yearNum + `)?` +
		`|(?:the\s+)?` + dayNum + `\s+(?:of\s+)?` + monthName + `(?:\s*,?\s*` + yearNum + `)?` +
		`|` + monthName + `\s*,?\s*` + yearNum +
		`|` + yearNum + `)`
	dateExpr = regexp.MustCompile(`(?i)(?:\b` + datePrep + `\s+)*(?:\b` + oneDate + `\b)` +
		`(?:\s*(?:` + datePrep + `)\s*(?:\b` + oneDate + `\b))*`)
	monthAfterPrep = regexp.MustCompile(`(?i)\b(?:in|during|since|until|till|through|by|before|after|around|of)\s+` + monthName + `\b`)
	spaces         = regexp.MustCompile(`\s+`)
)

// contentQuery returns query without its calendar dates, and whether it
// had any and enough is left to embed on its own (two words that are not
// stop words).
func contentQuery(query string) (string, bool) {
	out := dateExpr.ReplaceAllString(query, " ")
	out = monthAfterPrep.ReplaceAllString(out, " ")
	out = strings.TrimSpace(spaces.ReplaceAllString(out, " "))
	out = strings.TrimSpace(strings.TrimRight(out, " ,;:-–"))
	if q := strings.TrimSpace(query); out == q || strings.TrimRight(out, "?!. ") == strings.TrimRight(q, "?!. ") {
		return "", false
	}
	// Punctuation the dates leave behind: " ?" and ", ?".
	out = strings.NewReplacer(" ?", "?", " ,", ",", ",?", "?", " .", ".").Replace(out)
	content := 0
	for _, w := range words(out) {
		if !stopWords[w] {
			content++
		}
	}
	if content < 2 {
		return "", false
	}
	return out, true
}
