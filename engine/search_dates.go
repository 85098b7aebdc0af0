package engine

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
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
// (dateWords). The vector signal still ranks by the whole query: in a
// document a year is often what it says ("formed in 1995"). The dates
// enter ranking as the time signal (below).
var (
	monthName = `(?:january|february|march|april|may|june|july|august|september|october|november|december|` +
		`jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?`
	dayNum   = `(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?`
	yearNum  = `(?:1[89][0-9]{2}|2[0-9]{3})`
	isoDate  = `(?:1[89][0-9]{2}|2[0-9]{3})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])`
	datePrep = `(?:in|on|during|from|since|until|till|through|by|before|after|around|between|of|and|to|-|–)`
	// A date: month and day (and year), day and month (and year), month
	// and year, or a year alone. A month name alone ("in June") counts only
	// after a preposition: "May" and "June" are also a verb and a name.
	oneDate = `(?:` + isoDate + `|` + monthName + `\s+` + dayNum + `(?:\s*,?\s*` + yearNum + `)?` +
		`|(?:the\s+)?` + dayNum + `\s+(?:of\s+)?` + monthName + `(?:\s*,?\s*` + yearNum + `)?` +
		`|` + monthName + `\s*,?\s*` + yearNum +
		`|` + yearNum + `)`
	dateExpr = regexp.MustCompile(`(?i)(?:\b` + datePrep + `\s+)*(?:\b` + oneDate + `\b)` +
		`(?:\s*(?:` + datePrep + `)\s*(?:\b` + oneDate + `\b))*`)
	monthAfterPrep = regexp.MustCompile(`(?i)\b(?:in|during|since|until|till|through|by|before|after|around|of)\s+` + monthName + `\b`)
	spaces         = regexp.MustCompile(`\s+`)
)

// readDates is what a search reads of its query's dates, at ref: the
// query without them, for relevance (contentQuery), and the spans they
// name, for the time signal (queryDatesAt). The cues are looked for once.
func readDates(query string, ref time.Time) (content string, spans []dateSpan) {
	c := dateCues(query)
	content, _ = contentQueryCued(query, c)
	return content, queryDatesCued(query, ref, c)
}

// contentQuery returns query without its calendar dates, absolute or
// relative ("last week"), and whether it had any and enough is left to
// embed on its own (two words that are not stop words).
func contentQuery(query string) (string, bool) { return contentQueryCued(query, dateCues(query)) }

func contentQueryCued(query string, c cues) (string, bool) {
	if !c.absolute && !c.relative {
		return "", false
	}
	out := query
	if c.relative {
		out = relativeDateCI.ReplaceAllString(out, " ")
	}
	out = dateExpr.ReplaceAllString(out, " ")
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

// The time signal. A query that names a calendar date with its year ("on
// 7 July, 2023", "in August 2023", "in 2024") or a relative one ("last
// week", read at the search's as_of, else now) asks of what was so then, and
// a memory is dated by its metadata (valid_from, else created_at: the
// dateWords of relevance). So each candidate the other signals found
// scores 1 when its date falls within a date the query names and 0
// otherwise, fused like the other signals (policy fusion_weights.time,
// default 1: under z-score fusion a date few candidates match moves them a
// long way, and one most of them match, little). The signal runs only when
// it tells candidates apart (some match, some not), and adds no candidate.
// LoCoMo R@10 0.7435 -> 0.7654 (docs/benchmarks.md, "The time signal").

// addDated adds the time signal to p for the spans a query names: score 1
// and rank 1 for every hit dated within one, score 0 (and no rank) for the
// others; nothing unless some hits are and some are not.
func addDated(p *pool, spans []dateSpan) {
	if len(spans) == 0 {
		return
	}
	var in, out []*hit
	for _, id := range p.order {
		if h := p.hits[id]; h.loaded && datedIn(h.mem, spans) {
			in = append(in, h)
		} else {
			out = append(out, h)
		}
	}
	if len(in) == 0 || len(out) == 0 {
		return
	}
	for _, h := range in {
		h.setRank(signalTime, 1, 1)
	}
	for _, h := range out {
		h.setRaw(signalTime, 0)
	}
	p.active |= 1 << signalSlot(signalTime)
}

// datedIn reports whether m's date (valid_from, else created_at) falls
// within one of spans. A date the query names is a date where the asker
// is, which the engine does not know: a span runs from its start in the
// earliest time zone (UTC+14) to its end in the latest (UTC-12).
func datedIn(m graph.Memory, spans []dateSpan) bool {
	t := graph.EventTime(m)
	for _, s := range spans {
		if !t.Before(s.from.Add(-earliestZone)) && t.Before(s.to.Add(latestZone)) {
			return true
		}
	}
	return false
}

// The time-zone window of a date a query names: its day starts in UTC+14
// and ends in UTC-12.
const (
	earliestZone = 14 * time.Hour
	latestZone   = 12 * time.Hour
)

// QueryPeriod is the period query names, read as the time signal reads it
// (the same dates, relative ones at ref, the same time-zone window): from
// the earliest start of the spans it names to the latest end. after is
// zero when the period has no start ("before 2024"), before when it has no
// end ("since March 2024"); ok is false when query names no date. It is
// for callers that turn a question into a filter (A2A's research), so that
// the filter and the time signal of the search it runs agree. A query
// longer than MaxQueryLen, which a search refuses, names no period.
func QueryPeriod(query string, ref time.Time) (after, before time.Time, ok bool) {
	if len(query) > MaxQueryLen { // a search refuses it: no dates to read
		return time.Time{}, time.Time{}, false
	}
	spans := queryDatesAt(query, ref)
	if len(spans) == 0 {
		return time.Time{}, time.Time{}, false
	}
	hull := spans[0]
	for _, s := range spans[1:] {
		if s.from.Before(hull.from) {
			hull.from = s.from
		}
		if s.to.After(hull.to) {
			hull.to = s.to
		}
	}
	r := hull.dateRange()
	if !r.From.IsZero() {
		after = r.From.Add(-earliestZone)
	}
	if !r.To.IsZero() {
		before = r.To.Add(latestZone)
	}
	return after, before, true
}

// dateSpan is a stretch of calendar time a query names: [from, to).
type dateSpan struct{ from, to time.Time }

// DateRange is a span of calendar time a query names, in UTC: From
// inclusive, To exclusive; an open end ("since March 2024") is absent.
type DateRange struct {
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

// dateRange is s with its open ends (farPast, farFuture) zero.
func (s dateSpan) dateRange() DateRange {
	var r DateRange
	if s.from.After(farPast) {
		r.From = s.from
	}
	if s.to.Before(farFuture) {
		r.To = s.to
	}
	return r
}

// dateRanges is spans as a search response reports them.
func dateRanges(spans []dateSpan) []DateRange {
	var out []DateRange
	for _, s := range spans {
		out = append(out, s.dateRange())
	}
	return out
}

var (
	dayMonthYear  = regexp.MustCompile(`(?i)\b(?:the\s+)?(` + dayNum + `)\s+(?:of\s+)?(` + monthName + `)\s*,?\s*(` + yearNum + `)\b`)
	monthDayYear  = regexp.MustCompile(`(?i)\b(` + monthName + `)\s+(` + dayNum + `)\s*,?\s*(` + yearNum + `)\b`)
	monthYear     = regexp.MustCompile(`(?i)\b(` + monthName + `)\s*,?\s*(` + yearNum + `)\b`)
	yearAlone     = regexp.MustCompile(`\b(` + yearNum + `)\b`)
	isoDay        = regexp.MustCompile(`\b(` + yearNum + `)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])\b`)
	yearRange     = regexp.MustCompile(`(?i)\b(?:between|from)\s+(` + yearNum + `)\s*(?:and|to|until|till|-|–)\s*(` + yearNum + `)\b`)
	monthDayRange = regexp.MustCompile(`(?i)\b(?:between|from)\s+(` + monthName + `)\s+(` + dayNum + `)\s+(?:and|to|until|till|-|–)\s+(` +
		monthName + `)\s+(` + dayNum + `)\s*,?\s*(` + yearNum + `)\b`)
	// monthOf reads every spelling monthName matches (lower case, no dot).
	monthOf = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
		"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2,
		"mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
)

// queryDates returns the days, months and years query names with a year
// ("7 July, 2023", "August 2023", "2024", "2026-11-20"), and the ranges
// between them, each as the span it covers, in UTC, open-ended after
// "since", "after", "before" and the like. A day or month without a year
// names no span: which year is meant is a guess.
func queryDates(query string) []dateSpan { return absoluteDates(query, dateCues(query)) }

func absoluteDates(query string, c cues) []dateSpan {
	if !c.absolute {
		return nil
	}
	type found struct {
		at   int
		span dateSpan
	}
	var spans []found
	taken := make([]bool, len(query))
	claim := func(loc []int) bool {
		for i := loc[0]; i < loc[1]; i++ {
			if taken[i] {
				return false
			}
		}
		for i := loc[0]; i < loc[1]; i++ {
			taken[i] = true
		}
		return true
	}
	add := func(loc []int, from, to time.Time) {
		if from.Before(to) && claim(loc[:2]) {
			spans = append(spans, found{loc[0], dateSpan{from, to}})
		}
	}
	month := func(s string) time.Month { return monthOf[strings.TrimSuffix(strings.ToLower(s), ".")] }
	num := func(s string) int { n, _ := strconv.Atoi(strings.TrimRight(strings.ToLower(s), "stndrh")); return n }
	date := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	// "between August 11 and August 15 2023", "from May 3 to May 9, 2024":
	// one span, the first day taking the last one's year; "from 2009 to
	// 2014": the years between too.
	for _, m := range monthDayRange.FindAllStringSubmatchIndex(query, -1) {
		y := num(query[m[10]:m[11]])
		add(m, date(y, month(query[m[2]:m[3]]), num(query[m[4]:m[5]])),
			date(y, month(query[m[6]:m[7]]), num(query[m[8]:m[9]])).AddDate(0, 0, 1))
	}
	for _, m := range yearRange.FindAllStringSubmatchIndex(query, -1) {
		add(m, date(num(query[m[2]:m[3]]), 1, 1), date(num(query[m[4]:m[5]])+1, 1, 1))
	}
	for _, m := range isoDay.FindAllStringSubmatchIndex(query, -1) {
		t := date(num(query[m[2]:m[3]]), time.Month(num(query[m[4]:m[5]])), num(query[m[6]:m[7]]))
		add(m, t, t.AddDate(0, 0, 1))
	}
	for _, m := range dayMonthYear.FindAllStringSubmatchIndex(query, -1) {
		t := date(num(query[m[6]:m[7]]), month(query[m[4]:m[5]]), num(query[m[2]:m[3]]))
		add(m, t, t.AddDate(0, 0, 1))
	}
	for _, m := range monthDayYear.FindAllStringSubmatchIndex(query, -1) {
		t := date(num(query[m[6]:m[7]]), month(query[m[2]:m[3]]), num(query[m[4]:m[5]]))
		add(m, t, t.AddDate(0, 0, 1))
	}
	for _, m := range monthYear.FindAllStringSubmatchIndex(query, -1) {
		t := date(num(query[m[4]:m[5]]), month(query[m[2]:m[3]]), 1)
		add(m, t, t.AddDate(0, 1, 0))
	}
	for _, m := range yearAlone.FindAllStringSubmatchIndex(query, -1) {
		t := date(num(query[m[2]:m[3]]), 1, 1)
		add(m, t, t.AddDate(1, 0, 0))
	}
	// An open end: "since March 2024" and "from 2026-03-01" run on from the
	// date's start, "after 2023" from its end; "before May 2024" runs up to
	// its start, "until" and "till" to its end.
	var out []dateSpan
	for _, f := range spans {
		s := f.span
		ws := words(query[:f.at])
		if len(ws) >= 2 && periodWords[ws[len(ws)-2]] {
			// "the week before August 3, 2023", "two weeks before": a
			// period near the date, which the date's own span stands
			// for better than everything before it.
			out = append(out, s)
			continue
		}
		switch lastWord(query[:f.at]) {
		case "since", "from":
			s.to = farFuture
		case "after":
			s.from, s.to = s.to, farFuture
		case "before":
			s.from, s.to = farPast, s.from
		case "until", "till":
			s.from = farPast
		}
		out = append(out, s)
	}
	return out
}

// queryDatesAt is queryDates with the relative dates query names read at
// ref (the search's as_of, else now): today, yesterday, this or last week
// (from Monday), month or year, N days, weeks, months or years ago, and the
// last (or past) N days, weeks, months or years and the past week, month
// or year, each up to the end of today ("last week" is the calendar week
// before this one, "the past week" the last 7 days). "Recently" names no
// span.
func queryDatesAt(query string, ref time.Time) []dateSpan {
	return queryDatesCued(query, ref, dateCues(query))
}

func queryDatesCued(query string, ref time.Time, c cues) []dateSpan {
	out := absoluteDates(query, c)
	if !c.relative {
		return out
	}
	ref = ref.UTC()
	today := time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	year := time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	for _, m := range relativeDate.FindAllStringSubmatch(strings.ToLower(query), -1) {
		var span dateSpan
		switch {
		case m[1] == "today":
			span = dateSpan{today, today.AddDate(0, 0, 1)}
		case m[1] == "yesterday":
			span = dateSpan{today.AddDate(0, 0, -1), today}
		case m[2] != "": // this or last week, month, year
			back := 0
			if m[2] == "last" {
				back = 1
			}
			switch m[3] {
			case "week":
				span = dateSpan{monday.AddDate(0, 0, -7*back), monday.AddDate(0, 0, 7-7*back)}
			case "month":
				span = dateSpan{month.AddDate(0, -back, 0), month.AddDate(0, 1-back, 0)}
			case "year":
				span = dateSpan{year.AddDate(-back, 0, 0), year.AddDate(1-back, 0, 0)}
			}
		case m[4] != "": // the last (past) N days, weeks, months or years, today included
			span = rollingSpan(today, numberWord(m[5]), m[6])
		case m[9] != "": // the past week, month or year: the last 7 days, ..., today included
			span = rollingSpan(today, 1, m[9])
		case m[7] != "": // N days, weeks, months or years ago
			k := numberWord(m[7])
			switch {
			case strings.HasPrefix(m[8], "day"):
				span = dateSpan{today.AddDate(0, 0, -k), today.AddDate(0, 0, 1-k)}
			case strings.HasPrefix(m[8], "week"):
				span = dateSpan{monday.AddDate(0, 0, -7*k), monday.AddDate(0, 0, 7-7*k)}
			case strings.HasPrefix(m[8], "month"):
				span = dateSpan{month.AddDate(0, -k, 0), month.AddDate(0, 1-k, 0)}
			case strings.HasPrefix(m[8], "year"):
				span = dateSpan{year.AddDate(-k, 0, 0), year.AddDate(1-k, 0, 0)}
			}
		}
		if span.from.Before(span.to) {
			out = append(out, span)
		}
	}
	return out
}

// rollingSpan is the last n days, weeks, months or years (unit, singular
// or plural) up to the end of today.
func rollingSpan(today time.Time, n int, unit string) dateSpan {
	end := today.AddDate(0, 0, 1)
	switch {
	case strings.HasPrefix(unit, "week"):
		return dateSpan{end.AddDate(0, 0, -7*n), end}
	case strings.HasPrefix(unit, "month"):
		return dateSpan{end.AddDate(0, -n, 0), end}
	case strings.HasPrefix(unit, "year"):
		return dateSpan{end.AddDate(-n, 0, 0), end}
	}
	return dateSpan{end.AddDate(0, 0, -n), end}
}

var (
	numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3}
	relativeDate = regexp.MustCompile(`\b(today|yesterday)\b` +
		`|\b(?:the\s+)?(?:(this|last)\s+(week|month|year))\b` +
		`|\b(?:the\s+)?(last|past)\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple of)\s+(days?|weeks?|months?|years?)\b` +
		`|\b(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple of)\s+(days?|weeks?|months?|years?)\s+ago\b` +
		`|\b(?:the\s+)?past\s+(week|month|year)\b`)
)

// numberWord reads a count written in digits or as a word (0 if neither).
func numberWord(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return numberWords[s]
}

// periodWords, before "before" or "after", make it name a period near the
// date rather than an open end.
var periodWords = map[string]bool{"day": true, "days": true, "week": true, "weeks": true, "weekend": true,
	"month": true, "months": true, "year": true, "years": true, "night": true, "morning": true, "evening": true,
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true}

// The open ends of a span: every memory's date lies between them.
var (
	farPast   = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// lastWord returns the last word of s, in lower case ("" if none).
func lastWord(s string) string {
	ws := words(s)
	if len(ws) == 0 {
		return ""
	}
	return ws[len(ws)-1]
}

// cues says whether a query may name an absolute date (a digit or a
// month's name) and a relative one (today, yesterday, this, last, past,
// ago). Most queries have neither, and skip the expressions above.
type cues struct{ absolute, relative bool }

// dateCues finds query's cues in one pass over its words.
func dateCues(query string) cues {
	c := cues{absolute: strings.ContainsAny(query, "0123456789")}
	for _, w := range words(query) {
		c.absolute = c.absolute || monthOf[w] != 0
		c.relative = c.relative || relativeWords[w]
	}
	return c
}

var relativeWords = map[string]bool{"today": true, "yesterday": true, "this": true, "last": true, "past": true, "ago": true}

// relativeDateCI is relativeDate with a preposition before it, in any case,
// for contentQuery to take out.
var relativeDateCI = regexp.MustCompile(`(?i)(?:\b(?:in|on|over|during|within|since)\s+)?(?:` + relativeDate.String() + `)`)
