package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

func TestSuccessorsFirst(t *testing.T) {
	old := &hit{mem: graph.Memory{ID: "old", SupersededBy: "new"}}
	older := &hit{mem: graph.Memory{ID: "older", SupersededBy: "old"}}
	other := &hit{mem: graph.Memory{ID: "other"}}
	gone := &hit{mem: graph.Memory{ID: "gone", SupersededBy: "absent"}}
	neu := &hit{mem: graph.Memory{ID: "new"}}
	got := successorsFirst([]*hit{older, old, other, gone, neu})
	assert.Equal(t, []string{"other", "gone", "new", "old", "older"}, ids(got))
}

func TestConfidence(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		h     hit
		want  float64
		flags []string
	}{
		{"plain", hit{relevance: 0.8, mem: graph.Memory{Status: graph.StatusActive}}, 0.8, nil},
		{"superseded", hit{relevance: 0.8, mem: graph.Memory{Status: graph.StatusSuperseded}}, 0.55, []string{"superseded"}},
		{"older version", hit{relevance: 0.8, hasVersion: true, version: graph.Version{Number: 1}, mem: graph.Memory{Status: graph.StatusActive, VersionCount: 2}}, 0.55, []string{"older_version"}},
		{"expired", hit{relevance: 0.8, mem: graph.Memory{ValidTo: now}}, 0.5, []string{"expired"}},
		{"expiring", hit{relevance: 0.8, mem: graph.Memory{ValidTo: now.Add(48 * time.Hour)}}, 0.7, []string{"expiring"}},
		{"inferred", hit{relevance: 0.8, mem: graph.Memory{SourceKind: graph.SourceProposed}}, 0.7, []string{"inferred"}},
		{"agent provenance", hit{relevance: 0.8, version: graph.Version{Provenance: graph.Provenance{ActorType: "Agent"}}}, 0.7, []string{"inferred"}},
		{"clamped at zero", hit{relevance: 0.1, mem: graph.Memory{Status: graph.StatusSuperseded, ValidTo: now}}, 0, []string{"superseded", "expired"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, flags := confidence(&tc.h, now)
			assert.InDelta(t, tc.want, got, 1e-9)
			assert.Equal(t, tc.flags, flags)
		})
	}
}

func TestContradictions(t *testing.T) {
	claim := func(id, key, text string) SearchResult {
		return SearchResult{Memory: graph.Memory{ID: id, Status: graph.StatusActive, Sublayer: "Fact", CanonicalKey: key, UserID: "u"}, fullText: text}
	}
	rs := []SearchResult{
		claim("a", "Self-Pref-Dark", "I prefer dark themes"),
		claim("b", "Self-Pref-Light", "I prefer light themes"),
		claim("c", "Api-Config-Port", "the api listens on port 8080"),
		claim("d", "Api-Config-Port2", "the api does not listen on port 8080"),
		claim("e", "Db-Config-Port", "the database listens on port 5432"),
	}
	other := claim("f", "Self-Pref-Tabs", "I prefer tabs")
	other.Memory.UserID = "someone else"
	rs = append(rs, other)
	got := contradictions(rs)
	assert.Equal(t, []Contradiction{
		{A: "a", B: "b", Kind: "canonical_key", Reason: "same subject and aspect Self-Pref with qualifiers Dark and Light"},
		{A: "c", B: "d", Kind: "canonical_key", Reason: "same subject and aspect Api-Config with qualifiers Port and Port2"},
	}, got)

	neg := []SearchResult{claim("x", "", "the api listens on port 8080"), claim("y", "", "the api never listens on port 8080")}
	got = contradictions(neg)
	if assert.Len(t, got, 1) {
		assert.Equal(t, "negation", got[0].Kind)
	}
	notes := []SearchResult{claim("x", "", "the api listens on port 8080"), claim("y", "", "the api never listens on port 8080")}
	notes[1].Memory.Sublayer = "Event"
	assert.Empty(t, contradictions(notes), "only beliefs and facts are compared")
}
