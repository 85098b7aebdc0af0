package graph

import "context"

// Capsules is the capability to store capsules: named, frozen selections of
// memories. It is optional (graph/doc.go says how the engine finds it);
// both shipped stores implement it, and graph/storetest.RunCapsules is its
// conformance suite.
type Capsules interface {
	// CreateCapsule and GetCapsule store and read capsules.
	CreateCapsule(ctx context.Context, c Capsule) (Capsule, error)
	GetCapsule(ctx context.Context, f Filter, id string) (Capsule, error)
}
