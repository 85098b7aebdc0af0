package policy_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/policy"
)

// defaultPolicyPath is the shipped default, embedded by package config.
const defaultPolicyPath = "../config/default_policy.yaml"

func loadDefault(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.LoadFile(defaultPolicyPath)
	require.NoError(t, err)
	return p
}

func TestDefaultPolicyParses(t *testing.T) {
	p := loadDefault(t)
	for _, typ := range []string{"note", "document", "task", "decision", "belief", "episode", "skill"} {
		_, ok := p.Type(typ)
		require.True(t, ok, "default policy lacks type %q", typ)
	}
	task, _ := p.Type("task")
	require.Equal(t, []string{"todo", "done"}, task.Statuses)
	require.Equal(t, "optional", task.Due)
	require.Equal(t, 30, p.SAQ.MaxLength)
	require.Equal(t, "hybrid", p.Retrieval.Mode)
	require.Equal(t, map[string]float64{"graph": 1, "vector": 1, "keyword": 0.7, "time": 1}, p.Retrieval.FusionWeights)
	require.Equal(t, 60, p.Retrieval.RRFK)
	require.True(t, p.Retrieval.RerankEnabled())

	data, err := os.ReadFile(defaultPolicyPath)
	require.NoError(t, err)
	_, err = policy.Parse("default_policy.yaml", data)
	require.NoError(t, err)
}
