package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestSearchTimeSignal: a query that names a calendar date with its year
// ranks the candidates dated within it first, shown as the time signal
// (date_match); the signal adds no candidate, and runs only when it tells
// candidates apart. Four notes on the harbour festival, the ones the
// keyword signal ranks best dated outside August 2023 (more of the query's
// words, newer).
func TestSearchTimeSignal(t *testing.T) {
	ctx := context.Background()
	store := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder, Now: func() time.Time { return now }})
	require.NoError(t, err)
	scope := graph.Scope{TenantID: "t1"}
	names := map[string]string{}
	for _, m := range []struct {
		name, text string
		at         time.Time
	}{
		{"july", "the harbour festival fireworks and the harbour festival parade", time.Date(2023, 7, 7, 18, 0, 0, 0, time.UTC)},
		{"august", "we went to the harbour festival", time.Date(2023, 8, 5, 17, 0, 0, 0, time.UTC)},
		{"january", "the harbour festival fireworks were loud", time.Date(2024, 1, 7, 17, 0, 0, 0, time.UTC)},
		{"march", "the harbour festival fireworks were late", time.Date(2024, 3, 2, 17, 0, 0, 0, time.UTC)},
		{"may", "a harbour festival", now.AddDate(0, 0, -11)}, // the week before the clock's (a Sunday)
	} {
		c, err := graphtest.CreateMemory(ctx, store, graph.MemoryInput{
			Memory:  graph.Memory{Scope: scope, UserID: "u1", Type: "note", Title: "harbour note", Importance: 0.5, Visibility: graph.VisibilityUser, CreatedAt: m.at},
			Version: graph.VersionInput{Content: m.text}})
		require.NoError(t, err)
		names[c.Memory.ID] = m.name
	}
	p := graph.Principal{ID: "u1", Roles: []string{"admin"}, Scope: scope}
	search := func(query string) (order []string, dated map[string]bool) {
		t.Helper()
		resp, err := eng.Search(ctx, p, engine.SearchRequest{Query: query, Mode: policy.ModeKeyword})
		require.NoError(t, err)
		dated = map[string]bool{}
		for _, r := range resp.Results {
			name := names[r.Memory.ID]
			order = append(order, name)
			s, ok := r.Signals["time"]
			dated[name] = ok
			assert.Equal(t, ok, slices.Contains(r.WhyIncluded, engine.WhyDate), name)
			if ok {
				assert.Equal(t, engine.SignalRank{Rank: 1, Score: 1}, s, name)
			}
		}
		return order, dated
	}

	base, dated := search("harbour festival fireworks")
	require.Len(t, base, 5)
	assert.NotEqual(t, "august", base[0], "the keyword signal alone ranks the August note below others")
	assert.Empty(t, filterTrue(dated), "no date, no time signal")

	got, dated := search("harbour festival fireworks in August 2023")
	assert.Equal(t, "august", got[0], "the one candidate dated in August 2023 first")
	assert.Equal(t, map[string]bool{"august": true}, filterTrue(dated))

	got, dated = search("harbour festival fireworks in 2024")
	assert.ElementsMatch(t, []string{"january", "march"}, got[:2], "both notes of 2024 first")
	assert.Equal(t, map[string]bool{"january": true, "march": true}, filterTrue(dated))

	// Every candidate dated within: the signal stays out.
	got, dated = search("harbour festival fireworks between 2023 and 2025")
	assert.Equal(t, base, got)
	assert.Empty(t, filterTrue(dated))

	// A relative date is read at the engine's clock (as_of when asked).
	got, dated = search("harbour festival fireworks last week")
	assert.Equal(t, "may", got[0], "the note of the week before the clock's first")
	assert.Equal(t, map[string]bool{"may": true}, filterTrue(dated))

	// At weight 0 the signal does not run.
	pol.Retrieval.FusionWeights["time"] = 0
	require.NoError(t, holder.Reload(func() (*policy.Policy, error) { return pol, nil }))
	got, dated = search("harbour festival fireworks in August 2023")
	assert.Equal(t, base, got, "fusion_weights.time 0")
	assert.Empty(t, filterTrue(dated), "fusion_weights.time 0")
	pol.Retrieval.FusionWeights["time"] = 1
	require.NoError(t, holder.Reload(func() (*policy.Policy, error) { return pol, nil }))

	for _, q := range []string{"harbour festival fireworks in 2031", "harbour festival fireworks recently"} {
		got, dated = search(q)
		assert.Equal(t, base, got, "%s: every candidate or none dated within: the order of the other signals", q)
		assert.Empty(t, filterTrue(dated), q)
	}

	// The response says which spans the query named, as read, whether or
	// not the signal ran; an open end is absent.
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		query string
		want  []engine.DateRange
	}{
		{"harbour festival fireworks", nil},
		{"harbour festival fireworks in August 2023", []engine.DateRange{{From: day(2023, 8, 1), To: day(2023, 9, 1)}}},
		{"harbour festival fireworks between 2023 and 2025", []engine.DateRange{{From: day(2023, 1, 1), To: day(2026, 1, 1)}}},
		{"harbour festival fireworks since March 2024", []engine.DateRange{{From: day(2024, 3, 1)}}},
		{"harbour festival fireworks before 2024", []engine.DateRange{{To: day(2024, 1, 1)}}},
		{"harbour festival fireworks recently", nil},
	} {
		resp, err := eng.Search(ctx, p, engine.SearchRequest{Query: c.query, Mode: policy.ModeKeyword})
		require.NoError(t, err)
		assert.Equal(t, c.want, resp.Dates, c.query)
	}
}

func filterTrue(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		if v {
			out[k] = true
		}
	}
	return out
}
