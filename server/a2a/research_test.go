package a2a

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPlanQuestion: the planned filter is the period the engine's time
// signal reads from the same question (calendar weeks from Monday, a day's
// time-zone window: UTC+14 to UTC-12), and the types the question names.
func TestPlanQuestion(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC) // a Thursday
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		q             string
		types         []string
		after, before time.Time
	}{
		{"What did we decide about the staging database?", []string{"decision"}, time.Time{}, time.Time{}},
		// Monday 16 to Monday 23 November, not the 7 days before now.
		{"What did we decide last week?", []string{"decision"}, at(2026, 11, 15, 10), at(2026, 11, 23, 12)},
		{"Which tasks are open this week?", []string{"task"}, at(2026, 11, 22, 10), at(2026, 11, 30, 12)},
		{"What changed in the last 3 days?", nil, at(2026, 11, 23, 10), at(2026, 11, 27, 12)},
		// The last 7 days, today included: 20 to 26 November.
		{"What did we decide in the past week?", []string{"decision"}, at(2026, 11, 19, 10), at(2026, 11, 27, 12)},
		{"Tasks from the past 2 months", []string{"task"}, at(2026, 9, 26, 10), at(2026, 11, 27, 12)},
		{"What broke yesterday?", nil, at(2026, 11, 24, 10), at(2026, 11, 26, 12)},
		{"decisions since 2026-03-01", []string{"decision"}, at(2026, 2, 28, 10), time.Time{}},
		{"What did we believe before May 2024?", []string{"belief"}, time.Time{}, at(2024, 5, 1, 12)},
		{"What shipped in 2025?", nil, at(2024, 12, 31, 10), at(2026, 1, 1, 12)},
		{"What happened in August 2023?", nil, at(2023, 7, 31, 10), at(2023, 9, 1, 12)},
		{"Docs written between 2019 and 2021", []string{"document"}, at(2018, 12, 31, 10), at(2022, 1, 1, 12)},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			p := planQuestion(tt.q, now)
			assert.Equal(t, tt.q, p.Query, "the question is the query")
			assert.Equal(t, tt.types, p.Types)
			assert.Equal(t, tt.after, p.After, "after")
			assert.Equal(t, tt.before, p.Before, "before")
		})
	}
}
