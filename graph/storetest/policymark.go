package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPolicyMark: every reload bumps the one generation, also when clients
// of the same data (replicas) mark at once, and the mark read back is the
// newest one written.
func testPolicyMark(t *testing.T, x *suite) {
	second := x.otherClient(t)
	before, err := x.s.PolicyMark(ctx(t))
	require.NoError(t, err)
	const marks = 8
	var wg sync.WaitGroup
	for i := range marks {
		store := x.s
		if i%2 == 1 {
			store = second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := store.MarkPolicy(ctx(t), fmt.Sprintf("digest-%d", i), "policy.yaml", "p", time.Now())
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	at := base.Add(time.Hour)
	last, err := second.MarkPolicy(ctx(t), "digest-last", "custom.yaml", "admin", at)
	require.NoError(t, err)
	assert.Equal(t, before.Generation+marks+1, last.Generation, "each mark bumps the generation once")
	got, err := x.s.PolicyMark(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, last.Generation, got.Generation)
	assert.Equal(t, "digest-last", got.Digest)
	assert.Equal(t, "custom.yaml", got.Name)
	assert.Equal(t, "admin", got.MarkedBy)
	assert.True(t, at.Equal(got.MarkedAt), "marked at %v, read %v", at, got.MarkedAt)
}
