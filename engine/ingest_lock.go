package engine

import (
	"hash/fnv"
	"slices"
	"sync"
)

// keyLocks serialises the integrity and write stages of ingests that share a
// dedupe namespace and canonical key. Without it two writers storing the
// first fact under one key both find no active memory and both create one.
// Keys hash onto a fixed set of stripes; a batch locks its stripes in
// ascending order, so batches never deadlock. This holds within one engine
// (one mnemo process); across processes the store's exclusive keys
// (graph.MemoryInput.ExclusiveKey) refuse the second writer, which
// planAndWrite then re-plans.
type keyLocks struct {
	stripes [256]sync.Mutex
}

// lock locks the stripes of plans' dedupe keys and returns the unlock.
func (k *keyLocks) lock(plans []*plan) (unlock func()) {
	var held []int
	for _, pl := range plans {
		key := pl.in.Memory.CanonicalKey
		if key == "" || !pl.dedupe {
			continue
		}
		ns := pl.namespace()
		h := fnv.New32a()
		for _, part := range []string{ns.Scope.TenantID, ns.Scope.OrgID, ns.Scope.RepoID, ns.UserID, ns.Type, key} {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		held = append(held, int(h.Sum32()%uint32(len(k.stripes))))
	}
	slices.Sort(held)
	held = slices.Compact(held)
	for _, i := range held {
		k.stripes[i].Lock()
	}
	return func() {
		for _, i := range held {
			k.stripes[i].Unlock()
		}
	}
}
