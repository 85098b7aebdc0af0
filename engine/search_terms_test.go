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
