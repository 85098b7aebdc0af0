package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

func TestRelink(t *testing.T) {
	cases := []struct {
		name         string
		prevs, nexts map[string][]string
		want         [][2]string
	}{
		{"middle", map[string][]string{"b": {"a"}}, map[string][]string{"b": {"c"}}, [][2]string{{"a", "c"}}},
		{"head", map[string][]string{"c": {"b"}}, map[string][]string{"c": nil}, nil},
		{"tail", map[string][]string{"a": nil}, map[string][]string{"a": {"b"}}, nil},
		{"a run of two", map[string][]string{"b": {"a"}, "c": {"b"}}, map[string][]string{"b": {"c"}, "c": {"d"}},
			[][2]string{{"a", "d"}}},
		{"a fork after", map[string][]string{"b": {"a"}}, map[string][]string{"b": {"d", "c"}},
			[][2]string{{"a", "c"}, {"a", "d"}}},
		{"alone", map[string][]string{"x": nil}, map[string][]string{"x": nil}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, graph.Relink(c.prevs, c.nexts))
		})
	}
}
