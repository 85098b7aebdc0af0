package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestQueryNames(t *testing.T) {
	tests := []struct {
		name, query string
		want        []string
	}{
		{"stop words trimmed", "When did Caroline go to the LGBTQ support group?",
			[]string{"caroline go", "lgbtq support group", "lgbtq support", "support group", "caroline", "go", "lgbtq", "support", "group"}},
		{"possessive", "Melanie's kids", []string{"melanie s kids", "melanie", "kids"}},
		{"only stop words", "what is it?", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := queryNames(tc.query)
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
			if tc.want == nil {
				assert.Empty(t, got)
			}
			for _, g := range got {
				ws := words(g)
				assert.False(t, stopWords[ws[0]] || stopWords[ws[len(ws)-1]], "%q starts or ends with a stop word", g)
			}
		})
	}
}

func TestQueryEntities(t *testing.T) {
	tests := []struct {
		name, query string
		want        map[string]float64 // a subset of what is linked
		absent      []string
	}{
		{"proper nouns weigh 1, other names lowerCaseLink",
			"How many Publix stores are in the state where Hank Snow lived?",
			map[string]float64{"publix": 1, "hank snow": 1, "hank": 1, "snow": 1, "state": lowerCaseLink, "publix stores": lowerCaseLink},
			nil},
		{"a stop word inside a name", "What body of water is near the Siege of Cassel?",
			map[string]float64{"siege of cassel": 1, "cassel": 1, "body of water": lowerCaseLink},
			nil},
		{"the sentence's first word is no name on its own", "Where did Caroline go?",
			map[string]float64{"caroline": 1}, []string{"where"}},
		{"a name that opens the query", "Hank Snow recorded where?",
			map[string]float64{"hank snow": 1, "hank": 1}, nil},
		{"no capitals: every name alike", "deploy checklist for mnemo",
			map[string]float64{"deploy checklist": lowerCaseLink, "mnemo": lowerCaseLink}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := queryEntities(tc.query)
			for n, w := range tc.want {
				assert.Equal(t, w, got[n], n)
			}
			for _, n := range tc.absent {
				assert.NotContains(t, got, n)
			}
		})
	}
}
