package policy_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/policy"
)

func mustParse(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("policy.yaml", []byte(doc))
	require.NoError(t, err)
	return p
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Contains(t, s, old)
	return strings.Replace(s, old, new, 1)
}

func TestHolderReload(t *testing.T) {
	first := mustParse(t, minimal)
	h, err := policy.NewHolder(first)
	require.NoError(t, err)
	require.Same(t, first, h.Current())

	// An invalid policy keeps the running one.
	bad := replaceOnce(t, minimal, "mode: graph", "mode: graf")
	err = h.Reload(func() (*policy.Policy, error) { return policy.Parse("policy.yaml", []byte(bad)) })
	require.ErrorIs(t, err, policy.ErrInvalid)
	assert.Contains(t, err.Error(), "policy.yaml:46: retrieval.mode")
	assert.Same(t, first, h.Current())

	err = h.Reload(func() (*policy.Policy, error) { return nil, nil })
	require.Error(t, err)
	assert.Same(t, first, h.Current())

	second := mustParse(t, replaceOnce(t, minimal, "mode: graph", "mode: hybrid"))
	require.NoError(t, h.Reload(func() (*policy.Policy, error) { return second, nil }))
	assert.Same(t, second, h.Current())
	assert.Equal(t, policy.ModeHybrid, h.Current().Retrieval.Mode)

	_, err = policy.NewHolder(nil)
	require.Error(t, err)
}

// TestHolderConcurrent runs readers against reloads under -race: every read
// sees a whole, valid policy.
func TestHolderConcurrent(t *testing.T) {
	a := mustParse(t, minimal)
	b := mustParse(t, replaceOnce(t, minimal, "mode: graph", "mode: vector"))
	h, err := policy.NewHolder(a)
	require.NoError(t, err)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := errors.New("broken file")
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			next := a
			if i%2 == 0 {
				next = b
			}
			_ = h.Reload(func() (*policy.Policy, error) { return next, nil })
			_ = h.Reload(func() (*policy.Policy, error) { return nil, bad })
		}
		close(stop)
	}()
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := h.Current()
				if p == nil || (p.Retrieval.Mode != policy.ModeGraph && p.Retrieval.Mode != policy.ModeVector) {
					t.Errorf("reader saw an invalid policy: %+v", p)
					return
				}
			}
		}()
	}
	wg.Wait()
}
