package extract_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/policy"
)

// defaultPolicy loads the policy shipped in config/.
func defaultPolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.LoadFile("../config/default_policy.yaml")
	require.NoError(t, err)
	return p
}
