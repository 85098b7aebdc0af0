package local

import (
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/vector"
)

// slotMeta is what a slot holds besides its vector. A dead slot was deleted
// or replaced; it stays until compaction because the graph may route
// through it.
type slotMeta struct {
	p    vector.Payload
	dead bool
}

// state is the whole in-memory index: slots (vector + payload), the id map,
// per-tenant slot lists for filter-first exact search, and the graph once
// the index is large enough. Guarded by Index.mu.
type state struct {
	vs      vectors
	meta    []slotMeta
	byID    map[string]int32
	tenants map[string][]int32 // slots per tenant, dead ones included until compaction
	live    map[string]int     // live points per tenant
	nLive   int
	nDead   int
	graph   *hnsw
	strs    map[string]string   // interned payload strings: equal strings share memory
	tagSets map[string][]string // interned tag lists, keyed by their joined form
}

// newState returns an empty state with room for slots points, so that
// loading them grows neither the slot metadata (240 MB at 1M points) nor
// the id map by copying. (The vectors grow by blocks, never copied.)
func newState(dim, slots int) *state {
	return &state{
		vs:      vectors{dim: dim},
		meta:    make([]slotMeta, 0, slots),
		byID:    make(map[string]int32, slots),
		tenants: map[string][]int32{},
		live:    map[string]int{},
		strs:    map[string]string{},
		tagSets: map[string][]string{},
	}
}

func (s *state) intern(x string) string {
	if x == "" {
		return ""
	}
	if y, ok := s.strs[x]; ok {
		return y
	}
	s.strs[x] = x
	return x
}

// internPayload shares the strings that repeat from point to point. The
// memory and version ids are unique to a point: interning them would only
// add two map entries per point.
func (s *state) internPayload(p vector.Payload) vector.Payload {
	p.TenantID = s.intern(p.TenantID)
	p.OrgID = s.intern(p.OrgID)
	p.RepoID = s.intern(p.RepoID)
	p.Type = s.intern(p.Type)
	p.UserID = s.intern(p.UserID)
	p.Visibility = s.intern(p.Visibility)
	p.SubjectType = s.intern(p.SubjectType)
	p.SubjectID = s.intern(p.SubjectID)
	p.ProjectID = s.intern(p.ProjectID)
	p.SessionID = s.intern(p.SessionID)
	p.Tags = s.internTags(p.Tags)
	return p
}

// internTags returns the shared copy of an equal tag list (never the
// caller's slice, so the caller may reuse it). Shared lists are never
// modified; payloads handed out copy them (outPayload).
func (s *state) internTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	key := strings.Join(tags, "\x00")
	if y, ok := s.tagSets[key]; ok {
		return y
	}
	y := make([]string, len(tags))
	for i, t := range tags {
		y[i] = s.intern(t)
	}
	s.tagSets[key] = y
	return y
}

// outPayload is p as handed to a caller: its own copy of the tags.
func outPayload(p vector.Payload) vector.Payload {
	p.Tags = slices.Clone(p.Tags)
	return p
}

// put inserts or replaces one point; v must be a unit vector and
// p.MemoryID the point id. A replacement with the same vector and tenant
// updates the payload in place; otherwise the old slot dies and a new slot
// is appended (the graph, if any, is extended by the caller).
func (s *state) put(p vector.Payload, v []float32) {
	p = s.internPayload(p)
	if old, ok := s.byID[p.MemoryID]; ok {
		m := &s.meta[old]
		if m.p.TenantID == p.TenantID && slices.Equal(s.vs.at(old), v) {
			m.p = p
			return
		}
		s.kill(old)
	}
	slot := int32(len(s.meta))
	s.meta = append(s.meta, slotMeta{p: p})
	s.vs.push(v)
	s.byID[p.MemoryID] = slot
	s.tenants[p.TenantID] = append(s.tenants[p.TenantID], slot)
	s.live[p.TenantID]++
	s.nLive++
}

// appendDead adds a dead slot (only snapshots do: a graph node kept for
// navigation).
func (s *state) appendDead(v []float32) {
	s.meta = append(s.meta, slotMeta{dead: true})
	s.vs.push(v)
	s.nDead++
}

// remove deletes a point by id; unknown ids are ignored.
func (s *state) remove(id string) {
	if slot, ok := s.byID[id]; ok {
		s.kill(slot)
	}
}

func (s *state) kill(slot int32) {
	m := &s.meta[slot]
	delete(s.byID, m.p.MemoryID)
	s.live[m.p.TenantID]--
	if s.live[m.p.TenantID] == 0 {
		delete(s.live, m.p.TenantID)
		delete(s.tenants, m.p.TenantID)
	}
	m.dead = true
	m.p = vector.Payload{TenantID: m.p.TenantID}
	s.nLive--
	s.nDead++
}

// compacted returns a copy holding only live slots, renumbered, without a
// graph (the caller rebuilds one when it is wanted).
func (s *state) compacted() *state {
	c := newState(s.vs.dim, s.nLive)
	for slot := range s.meta {
		if !s.meta[slot].dead {
			c.put(s.meta[slot].p, s.vs.at(int32(slot)))
		}
	}
	return c
}
