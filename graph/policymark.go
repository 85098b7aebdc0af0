package graph

import "time"

// PolicyMark is the store's record of the newest policy reload, which every
// mnemo process serving the store follows (engine.FollowPolicy): a
// generation that each reload bumps, and the digest and name of the policy
// the reloading process then ran. There is one per store, not per tenant:
// the policy is the deployment's.
type PolicyMark struct {
	Generation int64
	Digest     string
	Name       string
	MarkedBy   string
	MarkedAt   time.Time
}
