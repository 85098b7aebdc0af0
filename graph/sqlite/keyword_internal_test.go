package sqlite

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKeywordTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"Café au lait", []string{"cafe", "au", "lait"}},
		{"naïve-Über_x2", []string{"naiv", "uber", "x2"}},
		{"pi is 3.14", []string{"pi", "is", "3", "14"}},
		{"İstanbul ÅNGSTRÖM", []string{"istanbul", "angstrom"}},
		{"日本語 text", []string{"日本語", "text"}},
		{"k8s/DB v1.2.3", []string{"k8s", "db", "v1", "2", "3"}},
		{"  --  ", nil},
		{"", nil},
		{"e\u0301te", []string{"ete"}}, // combining accent inside a token
		// English stems: a question's wording meets a memory's.
		{"Researching researched research", []string{"research", "research", "research"}},
		{"went to the support groups", []string{"went", "to", "the", "support", "group"}},
		{"painted paintings painter", []string{"paint", "paint", "painter"}},
		{"K8s clusters v2s", []string{"k8s", "cluster", "v2s"}}, // identifiers keep their letters
		{"résumés", []string{"resum"}},
	} {
		var got []string
		kwTokens(tc.in, func(s string) { got = append(got, s) })
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
	assert.Equal(t, []string{"dark", "mode"}, queryTerms("Dark MODE dark modes"), "distinct, in order")
}
