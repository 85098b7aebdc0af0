package engine

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Permissions answers whether a set of roles grants a permission. The
// policy implements it; the engine consults it on every use case.
type Permissions interface {
	Allows(roles []string, perm string) bool
}

// Permission names the engine checks.
const (
	PermRead            = "read"
	PermWrite           = "write"
	PermApprove         = "approve"
	PermReadQuarantined = "read_quarantined"
	PermAdmin           = "admin"
)

// Options wires an Engine. Store and Permissions are required; a nil Logger
// discards, a nil Now uses time.Now.
type Options struct {
	Store       graph.Store
	Permissions Permissions
	Logger      *slog.Logger
	Now         func() time.Time
}

// Engine runs mnemo's use cases. It is safe for concurrent use and holds no
// state of its own beyond its wiring: every piece of state lives in the
// stores, so several replicas can serve one graph.
type Engine struct {
	store graph.Store
	perms Permissions
	log   *slog.Logger
	now   func() time.Time
}

// New builds an Engine from its options.
func New(o Options) (*Engine, error) {
	if o.Store == nil {
		return nil, errors.New("engine: a graph store is required")
	}
	if o.Permissions == nil {
		return nil, errors.New("engine: permissions are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Engine{store: o.Store, perms: o.Permissions, log: o.Logger, now: o.Now}, nil
}
