package policy

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Holder keeps the running policy. Readers call Current on every request;
// Reload swaps in a new policy atomically, so no request sees a half-loaded
// policy and none is dropped.
type Holder struct {
	cur atomic.Pointer[Policy]
}

// NewHolder returns a Holder running p, which must not be nil.
func NewHolder(p *Policy) (*Holder, error) {
	if p == nil {
		return nil, errors.New("new policy holder: nil policy")
	}
	h := &Holder{}
	h.cur.Store(p)
	return h, nil
}

// Current returns the running policy.
func (h *Holder) Current() *Policy { return h.cur.Load() }

// Reload loads a new policy with load and makes it current. When load fails
// (or returns nil) the running policy stays and the error is returned.
func (h *Holder) Reload(load func() (*Policy, error)) error {
	p, err := load()
	if err != nil {
		return fmt.Errorf("reload policy: %w", err)
	}
	if p == nil {
		return errors.New("reload policy: loader returned no policy")
	}
	h.cur.Store(p)
	return nil
}
