package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func TestContentQuery(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"What natural disaster affected John's old area on 7 July, 2023?", "What natural disaster affected John's old area?"},
		{"What activity did Maria take up with her friends from church in August 2023?", "What activity did Maria take up with her friends from church?"},
		{"Where was John between August 11 and August 15 2023?", ""}, // "Where was John?": one word left
		{"Where was John staying between August 11 and August 15 2023?", "Where was John staying?"},
		{"What painting did Melanie show to Caroline on October 13, 2023?", "What painting did Melanie show to Caroline?"},
		{"What did Gina find for her clothing store on 1 February, 2023?", "What did Gina find for her clothing store?"},
		{"When did Melanie go camping in June?", "When did Melanie go camping?"},
		{"Which career-high performances did John achieve in 2023?", "Which career-high performances did John achieve?"},
		{"Incidence of sepsis has fallen substantially from 2009 to 2014.", "Incidence of sepsis has fallen substantially."},
		{"What did the team ship on the 3rd of May 2024 for the launch?", "What did the team ship for the launch?"},
		// No date: nothing to strip.
		{"May I see the release notes?", ""},
		{"What does June think of the new office?", ""},
		{"Which band released 1999?", "Which band released?"},
		{"What happened in 1999?", ""},     // one content word left
		{"What happened on June 5th?", ""}, // nothing left
		{"How many people attended the 2023 conference in Lisbon?", "How many people attended the conference in Lisbon?"},
		{"Where did the staging database move on 2026-11-20?", "Where did the staging database move?"},
		// Relative dates are dates too.
		{"What did we decide about the cache last week?", "What did we decide about the cache?"},
		{"Which incidents hit the billing service in the last 7 days?", "Which incidents hit the billing service?"},
		{"What did we decide about billing in the past month?", "What did we decide about billing?"},
		{"Which tasks slipped over the past 2 months?", "Which tasks slipped?"},
		{"Who had the last word on the cache?", ""},
	} {
		got, ok := contentQuery(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("contentQuery(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestQueryDates(t *testing.T) {
	day := func(y int, m time.Month, d int) dateSpan {
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return dateSpan{t, t.AddDate(0, 0, 1)}
	}
	month := func(y int, m time.Month) dateSpan {
		t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return dateSpan{t, t.AddDate(0, 1, 0)}
	}
	year := func(y int) dateSpan {
		t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return dateSpan{t, t.AddDate(1, 0, 0)}
	}
	for _, c := range []struct {
		in   string
		want []dateSpan
	}{
		{"What natural disaster affected John's old area on 7 July, 2023?", []dateSpan{day(2023, time.July, 7)}},
		{"What painting did Melanie show to Caroline on October 13, 2023?", []dateSpan{day(2023, time.October, 13)}},
		{"What did the team ship on the 3rd of May 2024?", []dateSpan{day(2024, time.May, 3)}},
		{"What activity did Maria take up in August 2023?", []dateSpan{month(2023, time.August)}},
		{"What did Maria donate in Dec. 2023?", []dateSpan{month(2023, time.December)}},
		{"Which career-high performances did John achieve in 2023?", []dateSpan{year(2023)}},
		{"Incidence of sepsis has fallen from 2009 to 2014.", []dateSpan{{year(2009).from, year(2014).to}}},
		{"Sepsis related mortality has remained stable between 2009-2014.", []dateSpan{{year(2009).from, year(2014).to}}},
		{"Mortality in 2009 and in 2014", []dateSpan{year(2009), year(2014)}},
		{"Where was John between August 11 and August 15 2023?", []dateSpan{{day(2023, time.August, 11).from, day(2023, time.August, 15).to}}},
		{"What shipped from May 3 to May 9, 2024?", []dateSpan{{day(2024, time.May, 3).from, day(2024, time.May, 9).to}}},
		{"The staging database moved on 2026-11-20.", []dateSpan{day(2026, time.November, 20)}},
		// Open ends.
		{"What changed since March 2024?", []dateSpan{{month(2024, time.March).from, farFuture}}},
		{"decisions from 2026-03-01 on", []dateSpan{{day(2026, time.March, 1).from, farFuture}}},
		{"What did we ship after 2023?", []dateSpan{{year(2023).to, farFuture}}},
		{"What did we know before May 2024?", []dateSpan{{farPast, month(2024, time.May).from}}},
		{"incidents until 2023-06-30", []dateSpan{{farPast, day(2023, time.June, 30).to}}},
		// A period before or after a date is near it, not open-ended.
		{"What did John do the week before August 3, 2023?", []dateSpan{day(2023, time.August, 3)}},
		{"the puppy she got two weeks before August 11, 2023", []dateSpan{day(2023, time.August, 11)}},
		{"on the Sunday before October 25, 2022", []dateSpan{day(2022, time.October, 25)}},
		// Without a year there is no span: which year is meant is a guess.
		{"When did Melanie go camping in June?", nil},
		{"What happened on June 5th?", nil},
		{"May I see the release notes?", nil},
		{"How many 300 notes a second?", nil},
	} {
		assert.Equal(t, c.want, queryDates(c.in), c.in)
	}
}

func TestQueryDatesAt(t *testing.T) {
	ref := time.Date(2026, 11, 29, 15, 4, 0, 0, time.UTC) // a Sunday
	d := func(m time.Month, day int) time.Time { return time.Date(2026, m, day, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		in   string
		want []dateSpan
	}{
		{"what did we decide today?", []dateSpan{{d(11, 29), d(11, 30)}}},
		{"what did Ana say yesterday?", []dateSpan{{d(11, 28), d(11, 29)}}},
		{"what changed this week?", []dateSpan{{d(11, 23), d(11, 30)}}},
		{"what changed last week?", []dateSpan{{d(11, 16), d(11, 23)}}},
		{"notes from last month", []dateSpan{{d(10, 1), d(11, 1)}}},
		{"what did we ship this year?", []dateSpan{{d(1, 1), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{"the trip last year", []dateSpan{{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), d(1, 1)}}},
		{"what broke 3 days ago?", []dateSpan{{d(11, 26), d(11, 27)}}},
		{"the review two weeks ago", []dateSpan{{d(11, 9), d(11, 16)}}},
		{"the offsite a month ago", []dateSpan{{d(10, 1), d(11, 1)}}},
		{"incidents in the last 7 days", []dateSpan{{d(11, 23), d(11, 30)}}},
		{"decisions over the past two weeks", []dateSpan{{d(11, 16), d(11, 30)}}},
		{"what changed in the past week?", []dateSpan{{d(11, 23), d(11, 30)}}},
		{"hires in the past month", []dateSpan{{d(10, 30), d(11, 30)}}},
		{"the past year of incidents", []dateSpan{{time.Date(2025, 11, 30, 0, 0, 0, 0, time.UTC), d(11, 30)}}},
		{"tasks from the last 3 months", []dateSpan{{d(8, 30), d(11, 30)}}},
		{"the past two years", []dateSpan{{time.Date(2024, 11, 30, 0, 0, 0, 0, time.UTC), d(11, 30)}}},
		{"the release on 3 May 2024 and last week", []dateSpan{
			{time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC), time.Date(2024, 5, 4, 0, 0, 0, 0, time.UTC)}, {d(11, 16), d(11, 23)}}},
		{"what did Melanie paint recently?", nil},
		{"the last word on it", nil},
		{"what is past tense?", nil},
	} {
		assert.Equal(t, c.want, queryDatesAt(c.in, ref), c.in)
	}
}

func TestDatedIn(t *testing.T) {
	spans := queryDates("what happened on 7 July, 2023?")
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2023, 7, 7, 12, 0, 0, 0, time.UTC), true},
		{time.Date(2023, 7, 6, 10, 0, 0, 0, time.UTC), true},  // 7 July in UTC+14
		{time.Date(2023, 7, 6, 9, 59, 0, 0, time.UTC), false}, // 6 July everywhere
		{time.Date(2023, 7, 8, 11, 59, 0, 0, time.UTC), true}, // 7 July in UTC-12
		{time.Date(2023, 7, 8, 12, 0, 0, 0, time.UTC), false},
	} {
		assert.Equal(t, c.want, datedIn(graph.Memory{CreatedAt: c.at}, spans), c.at)
		assert.Equal(t, c.want, datedIn(graph.Memory{CreatedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), ValidFrom: c.at}, spans),
			"valid_from before created_at: %v", c.at)
	}
}

// TestQueryPeriod: the period a question names is what the time signal
// reads from it: for a query of one span, a memory is dated within it
// exactly when its date is in [after, before), hour by hour across the
// span's edges; an open end is zero, and no date is no period.
func TestQueryPeriod(t *testing.T) {
	ref := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, q := range []string{
		"what happened on 7 July, 2023?", "anything from August 2023", "what did we decide last week",
		"the last 3 days", "since March 2024", "before 2019", "between 2019 and 2021",
	} {
		after, before, ok := QueryPeriod(q, ref)
		require.True(t, ok, q)
		spans := queryDatesAt(q, ref)
		require.Len(t, spans, 1, q)
		assert.Equal(t, spans[0].from == farPast, after.IsZero(), "%s: open start", q)
		assert.Equal(t, spans[0].to == farFuture, before.IsZero(), "%s: open end", q)
		for _, edge := range []time.Time{spans[0].from, spans[0].to} {
			if edge == farPast || edge == farFuture {
				continue
			}
			for h := -40; h <= 40; h++ {
				at := edge.Add(time.Duration(h) * time.Hour)
				in := (after.IsZero() || !at.Before(after)) && (before.IsZero() || at.Before(before))
				assert.Equal(t, datedIn(graph.Memory{CreatedAt: at}, spans), in, "%s at %v", q, at)
			}
		}
	}
	after, before, ok := QueryPeriod("what about connection pools", ref)
	assert.False(t, ok)
	assert.True(t, after.IsZero() && before.IsZero())
	_, _, ok = QueryPeriod(strings.Repeat("in 2023 ", MaxQueryLen/8+1), ref)
	assert.False(t, ok, "longer than a search takes: not read")
	// Two spans: the period runs from the first's start to the last's end.
	after, before, ok = QueryPeriod("in May 2023 or in August 2023", ref)
	require.True(t, ok)
	assert.Equal(t, time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC).Add(-14*time.Hour), after)
	assert.Equal(t, time.Date(2023, 9, 1, 0, 0, 0, 0, time.UTC).Add(12*time.Hour), before)
}

// BenchmarkQueryDates is what every search pays, when it is planned, to
// look for dates in its query (readDates: contentQuery for relevance,
// queryDatesAt for the time signal).
func BenchmarkQueryDates(b *testing.B) {
	for _, q := range []string{
		"what about PostgreSQL and connection pool settings",
		"What activity did Maria take up with her friends from church in August 2023?",
	} {
		b.Run(map[bool]string{true: "dated", false: "undated"}[len(queryDates(q)) > 0], func(b *testing.B) {
			now := time.Now()
			for b.Loop() {
				readDates(q, now)
			}
		})
	}
}

// FuzzQueryDates: any query gives well-formed spans and a content query no
// longer than itself, without panicking.
func FuzzQueryDates(f *testing.F) {
	for _, s := range []string{"on 7 July, 2023", "between August 11 and August 15 2023", "3 days ago", "the last 7 days",
		"from 2014 to 2009", "Dec. 31st, 1999", "February 30, 2023", "May I?", "last week and this year"} {
		f.Add(s)
	}
	ref := time.Date(2026, 11, 29, 15, 4, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		for _, s := range queryDatesAt(q, ref) {
			if !s.from.Before(s.to) {
				t.Fatalf("%q: empty span %v", q, s)
			}
		}
		if c, ok := contentQuery(q); ok && len(c) > len(q) {
			t.Fatalf("%q: content query %q is longer", q, c)
		}
	})
}
