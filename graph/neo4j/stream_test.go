package neo4j_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
)

// TestStream: a statement's records reach the caller in batches of n, in
// order, the last one shorter; none without records; an error after the
// first records is returned.
func TestStream(t *testing.T) {
	s := neo4jtest.Open(t, neo4jtest.Config(t))
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"UNWIND range(1, 7) AS i RETURN i", "[[1 2 3] [4 5 6] [7]]"},
		{"UNWIND range(1, 6) AS i RETURN i", "[[1 2 3] [4 5 6]]"},
		{"UNWIND [] AS i RETURN i", "[]"},
	} {
		got, err := s.StreamBatches(t.Context(), tc.query, 3)
		tr.NoError(t, err)
		assert.Equal(t, tc.want, fmt.Sprint(got), tc.query)
	}
	_, err := s.StreamBatches(t.Context(), "UNWIND range(1, 5000) AS i RETURN 10 / (4000 - i)", 3)
	assert.Error(t, err, "division by zero at the 4000th record")
}
