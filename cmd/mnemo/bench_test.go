package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWeightVariant(t *testing.T) {
	pol, err := benchPolicy("")
	require.NoError(t, err)
	base := maps.Clone(pol.Retrieval.FusionWeights)
	for _, c := range []struct {
		spec, name string
		want       map[string]float64
		err        bool
	}{
		{spec: "graph=0.3", name: "graph=0.3", want: map[string]float64{"graph": 0.3, "vector": base["vector"], "keyword": base["keyword"], "time": base["time"]}},
		{spec: "graph=0.3, vector=0.7,keyword=1", name: "graph=0.3,vector=0.7,keyword=1", want: map[string]float64{"graph": 0.3, "vector": 0.7, "keyword": 1, "time": base["time"]}},
		{spec: "graph", err: true},
		{spec: "graph=-1", err: true},
		{spec: "entity=1", err: true},
		{spec: "", err: true},
	} {
		t.Run(c.spec, func(t *testing.T) {
			v, err := weightVariant(pol, c.spec)
			if c.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.name, v.Name)
			assert.Equal(t, c.want, v.Policy.Retrieval.FusionWeights)
			assert.Equal(t, base, pol.Retrieval.FusionWeights, "the base policy is untouched")
		})
	}
}

// TestBenchFlags checks the flag errors of the bench commands, which fail
// before any data is read.
func TestBenchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "usage: mnemo bench"},
		{[]string{"nope"}, "usage: mnemo bench"},
		{[]string{"multihop", "-set", "wiki"}, "-set must be musique, hotpotqa or all"},
		{[]string{"multihop", "-fusion-weights", "graph"}, "want signal=weight"},
		{[]string{"multihop", "-graph-weight", "x"}, "weight of graph must be a number"},
		{[]string{"recall", "-vectors", "sometimes"}, "-vectors must be auto or off"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errOut strings.Builder
			err := runBench(context.Background(), c.args, &out, &errOut)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, out.String())
		})
	}
}

// TestBenchSciFactProgress runs `mnemo bench scifact` on a three-abstract
// set with the real model: stderr (not a terminal) carries the plain
// progress line of each stage at its end, --json leaves them out, and the
// report is on stdout.
func TestBenchSciFactProgress(t *testing.T) {
	requireModel(t)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "qrels"), 0o755))
	for name, body := range map[string]string{
		"corpus.jsonl": `{"_id":"1","title":"Aspirin","text":"Aspirin lowers the risk of heart attack."}
{"_id":"2","title":"Coffee","text":"Coffee raises alertness for a few hours."}
{"_id":"3","title":"Sleep","text":"Short sleep impairs memory consolidation."}
`,
		"queries.jsonl": `{"_id":"q1","text":"aspirin prevents heart attacks"}
{"_id":"q2","text":"lack of sleep harms memory"}
`,
		"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\t1\t1\nq2\t3\t1\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	for _, asJSON := range []bool{false, true} {
		args := []string{"scifact", "-dir", dir, "-vector-cache", "off"}
		if asJSON {
			args = append(args, "--json")
		}
		var out, errOut strings.Builder
		require.NoError(t, runBench(t.Context(), args, &out, &errOut), errOut.String())
		if asJSON {
			assert.Empty(t, errOut.String())
			assert.Contains(t, out.String(), `"bench": "scifact"`)
			continue
		}
		assert.Regexp(t, `(?m)^embed abstracts: 3/3 [0-9.]+/s$`, errOut.String())
		assert.Regexp(t, `(?m)^search: 2/2 [0-9.]+/s$`, errOut.String())
		assert.Contains(t, out.String(), "SciFact (")
	}
}
