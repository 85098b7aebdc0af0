package local

import (
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// slotMeta is what a slot holds besides its vector, compact: what is
// unique to the point (its ids and creation time) and the symbol of its
// shape, the payload's other fields (scope, owner, visibility, type,
// subject, project, session, tags), which repeat from point to point and
// are kept once per state (state.shapes). A slot is 64 bytes where a
// vector.Payload is 256 (about 190 MB less heap at 1M points). Filters are
// never matched against the compact form: payload rebuilds the
// vector.Payload and vector.Filter.Matches decides, the one matcher every
// backend shares. A dead slot was deleted or replaced; it stays until
// compaction because the graph may route through it, and keeps only its
// shape (for its tenant).
type slotMeta struct {
	memoryID, versionID string
	created             time.Time
	shape               sym
	dead                bool
}

// sym numbers a shape: an index into state.shapes.
type sym uint32

// shapeKey identifies a shape by its fields, the tags in their joined form.
type shapeKey struct {
	tenant, org, repo, user, visibility, typ, subjectType, subjectID, project, session, tags string
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
	// shapes are payloads without ids and creation time, one per distinct
	// combination of the other fields, never modified; [0] is empty.
	shapeIDs map[shapeKey]sym
	shapes   []vector.Payload
}

// newState returns an empty state with room for slots points, so that
// loading them grows neither the slot metadata (64 MB at 1M points) nor
// the id map by copying. (The vectors grow by blocks, never copied.)
func newState(dim, slots int) *state {
	return &state{
		vs:       vectors{dim: dim},
		meta:     make([]slotMeta, 0, slots),
		byID:     make(map[string]int32, slots),
		tenants:  map[string][]int32{},
		live:     map[string]int{},
		strs:     map[string]string{},
		tagSets:  map[string][]string{},
		shapeIDs: map[shapeKey]sym{{}: 0},
		shapes:   []vector.Payload{{}},
	}
}

// pack is p in a slot's compact form, its shape interned. The memory and
// version ids are unique to a point: interning them would only add two map
// entries per point.
func (s *state) pack(p vector.Payload) slotMeta {
	k := shapeKey{p.TenantID, p.OrgID, p.RepoID, p.UserID, p.Visibility, p.Type, p.SubjectType,
		p.SubjectID, p.ProjectID, p.SessionID, tagsKey(p.Tags)}
	id, ok := s.shapeIDs[k]
	if !ok {
		id = sym(len(s.shapes))
		shape := s.internPayload(p)
		shape.MemoryID, shape.VersionID, shape.CreatedAt = "", "", time.Time{}
		k.tenant, k.org, k.repo, k.user, k.visibility, k.typ = shape.TenantID, shape.OrgID, shape.RepoID, shape.UserID, shape.Visibility, shape.Type
		k.subjectType, k.subjectID, k.project, k.session = shape.SubjectType, shape.SubjectID, shape.ProjectID, shape.SessionID
		s.shapeIDs[k] = id // the key holds the interned strings, not the caller's
		s.shapes = append(s.shapes, shape)
	}
	return slotMeta{memoryID: p.MemoryID, versionID: p.VersionID, created: p.CreatedAt, shape: id}
}

// payload is the vector.Payload m packs, without allocating: its strings
// and its tag list are the state's shared copies (outPayload copies the
// tags for a caller).
func (s *state) payload(m *slotMeta) vector.Payload {
	p := s.shapes[m.shape]
	p.MemoryID, p.VersionID, p.CreatedAt = m.memoryID, m.versionID, m.created
	return p
}

// match reports whether the slot m is live and matches f.
func (s *state) match(m *slotMeta, f *vector.Filter) bool {
	if m.dead {
		return false
	}
	p := s.payload(m)
	return f.Matches(&p)
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

// internPayload shares the strings that repeat from point to point.
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
	key := tagsKey(tags)
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

// tagsKey is a tag list's joined form: "" for none, distinct from [""].
func tagsKey(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return "\x01" + strings.Join(tags, "\x00")
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
	pm := s.pack(p)
	if old, ok := s.byID[p.MemoryID]; ok {
		m := &s.meta[old]
		if s.shapes[m.shape].TenantID == p.TenantID && slices.Equal(s.vs.at(old), v) {
			*m = pm
			return
		}
		s.kill(old)
	}
	slot := int32(len(s.meta))
	s.meta = append(s.meta, pm)
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
	tenant := s.shapes[m.shape].TenantID
	delete(s.byID, m.memoryID)
	s.live[tenant]--
	if s.live[tenant] == 0 {
		delete(s.live, tenant)
		delete(s.tenants, tenant)
	}
	*m = slotMeta{shape: m.shape, dead: true}
	s.nLive--
	s.nDead++
}

// compacted returns a copy holding only live slots, renumbered, without a
// graph (the caller rebuilds one when it is wanted).
func (s *state) compacted() *state {
	c := newState(s.vs.dim, s.nLive)
	for slot := range s.meta {
		if !s.meta[slot].dead {
			c.put(s.payload(&s.meta[slot]), s.vs.at(int32(slot)))
		}
	}
	return c
}
