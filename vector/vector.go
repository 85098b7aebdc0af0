package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Errors callers test with errors.Is. Backends wrap them with context.
var (
	// ErrInvalid reports input refused before anything is written or
	// searched: an empty id, a NaN or infinite or all-zero vector, a filter
	// without a tenant, a non-positive k.
	ErrInvalid = errors.New("invalid vector input")
	// ErrDimension reports a vector whose length is not the index's
	// dimensions. It wraps ErrInvalid, so errors.Is(err, ErrInvalid) holds
	// for it too.
	ErrDimension = fmt.Errorf("%w: wrong dimensions", ErrInvalid)
	// ErrClosed reports a call on a closed index.
	ErrClosed = errors.New("vector index closed")
	// ErrOldFormat reports an index written by an older mnemo whose points
	// lack fields the filter needs (before format 2: the owner, visibility,
	// tags, subject, project and session the access rule reads). Such an
	// index is refused, never read with empty access fields; `mnemo
	// reindex` rebuilds it from the graph.
	ErrOldFormat = errors.New("vector index written in an older format")
)

// Payload is what a point carries besides its vector: every field the
// access rule and the caller's narrowing need, so that the index filters
// inside its search without a round trip to the graph. A memory's payload
// fields never change after it is written (only its status does, which the
// index does not carry), so a point stays correct until its memory gets a
// new version.
type Payload struct {
	MemoryID  string
	VersionID string // the version whose text was embedded
	TenantID  string // required
	OrgID     string // empty: a tenant-wide record
	RepoID    string // empty: an org-wide (or tenant-wide) record
	// UserID owns the memory; with a private Visibility only that user (or
	// a filter with AllUsers) reads the point.
	UserID string
	// Visibility is graph.Visibility as a string: session, user, project,
	// policy or global. session and user are private to UserID.
	Visibility  string
	Type        string // memory type, e.g. "note"
	Tags        []string
	SubjectType string
	SubjectID   string
	ProjectID   string
	SessionID   string
	CreatedAt   time.Time
}

// Visibilities private to their owner (graph.Visibility.Private): a point
// with one of these and a non-empty UserID is read only by that user or by a
// filter with AllUsers.
const (
	VisibilitySession = "session"
	VisibilityUser    = "user"
)

// Private reports whether p is readable only by its owner (and AllUsers).
func (p Payload) Private() bool {
	return p.UserID != "" && (p.Visibility == VisibilityUser || p.Visibility == VisibilitySession)
}

// Point is one memory in the index: ID is the memory id (one point per
// memory, embedding its current version). Payload.MemoryID is either empty,
// and then filled with ID, or equal to ID.
type Point struct {
	ID      string
	Vector  []float32
	Payload Payload
}

// Filter restricts a search to what the caller may read and asked for. It is
// built by the engine from graph.Filter (the principal's scope and reader,
// and the request's narrowing) and pushed into the index; results are never
// filtered after ranking.
//
// The access fields mirror graph.Reader (this package does not import
// graph; the rule is restated here and in the package comment, and the
// engine's tests check the two agree):
//
//   - Scope: without Subscopes a filter sees points of its own scope and of
//     the scopes above it (graph.Scope.Sees): the point's org is empty or
//     the filter's, and the point's repo is empty or (the filter's, in the
//     filter's org). A tenant-wide filter sees only tenant-wide points. With
//     Subscopes it also sees the points beneath (graph.Scope.Contains: an
//     empty org or repo in the filter means any).
//   - Users: a private point (Payload.Private: visibility user or session
//     with a non-empty owner) is seen only when ReaderUserID is its owner or
//     AllUsers is set. Every other point is seen by every reader of the
//     scope.
//
// A filter names its reader: Validate refuses one with neither ReaderUserID
// nor AllUsers. The engine's own maintenance (outbox, reindex, doctor) uses
// AllUsers and Subscopes, graph.System's equivalent.
type Filter struct {
	TenantID string // required
	OrgID    string // the reader's org; see Subscopes
	RepoID   string // the reader's repo; see Subscopes

	// ReaderUserID is the user the read is for (graph.Reader.UserID).
	ReaderUserID string
	// AllUsers reads every user's private points (graph.Reader.AllUsers).
	AllUsers bool
	// Subscopes reads points in scopes beneath OrgID/RepoID
	// (graph.Reader.Subscopes).
	Subscopes bool

	// The caller's narrowing; each zero value means no restriction.
	UserID      string   // the point's owner equals it (widens nothing)
	Types       []string // one of these
	Tags        []string // every one of these is among the point's tags
	Visibility  []string // one of these
	SubjectType string
	SubjectID   string
	ProjectID   string
	SessionID   string

	CreatedAfter  time.Time // inclusive; zero: no bound
	CreatedBefore time.Time // exclusive; zero: no bound
}

// Hit is one search result. Score is the cosine similarity between the query
// and the point's vector, in [-1, 1], higher is closer.
type Hit struct {
	ID      string
	Score   float32
	Payload Payload
}

// Index is a vector index over memories. Implementations are safe for
// concurrent use.
//
// Every vector handed in (points and queries) must have exactly Dimensions()
// finite components, not all zero; otherwise the call fails with ErrDimension
// or ErrInvalid and nothing is written. Vectors are normalised by the index,
// so callers need not.
type Index interface {
	// Dimensions is the length every vector must have.
	Dimensions() int
	// Upsert inserts or replaces points by ID. A batch is validated as a
	// whole before anything is written; when Upsert returns nil the batch
	// is durable.
	Upsert(ctx context.Context, pts []Point) error
	// Delete removes points by ID; unknown ids are ignored.
	Delete(ctx context.Context, ids []string) error
	// Search returns the k points closest to query by cosine similarity
	// among those matching f, best first (ties by ID ascending).
	Search(ctx context.Context, query []float32, f Filter, k int) ([]Hit, error)
	// Score returns the similarity of query to each of ids that exists and
	// matches f, best first (ties by ID ascending): a search restricted to
	// a candidate set. Ids that are unknown or outside f are absent.
	Score(ctx context.Context, query []float32, f Filter, ids []string) ([]Hit, error)
	// Scan calls fn with the payload of every point matching f, in no
	// particular order, without holding all of them in memory; it stops at
	// the first error fn returns and returns it. `mnemo doctor` uses it to
	// compare the index with the graph (missing points, stale versions).
	Scan(ctx context.Context, f Filter, fn func(Payload) error) error
	// Count returns the number of points matching f.
	Count(ctx context.Context, f Filter) (int, error)
	// Close releases the index; later calls fail with ErrClosed.
	Close() error
}

// Validate reports a filter that must not reach an index: no tenant, no
// reader (neither ReaderUserID nor AllUsers), or an empty time window.
func (f Filter) Validate() error {
	if f.TenantID == "" {
		return fmt.Errorf("%w: filter: tenant_id required", ErrInvalid)
	}
	if f.ReaderUserID == "" && !f.AllUsers {
		return fmt.Errorf("%w: filter: a reader is required (reader_user_id, or all_users for maintenance)", ErrInvalid)
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		return fmt.Errorf("%w: filter: created_before must be after created_after", ErrInvalid)
	}
	return nil
}

// Match reports whether a point carrying p is visible under f: the access
// rule (scope and users, see Filter) and then the caller's narrowing. It is
// the reference every backend implements inside its search.
func (f Filter) Match(p Payload) bool {
	return f.Matches(&p)
}

// Matches is Match for a caller holding the filter and the payload by
// pointer: it copies neither (Filter and Payload are a few hundred bytes
// each, and an index matches every node its search visits).
func (f *Filter) Matches(p *Payload) bool {
	return f.admits(p) && f.narrowsTo(p)
}

// Admits is the access half of Match: tenant, scope and the private rule.
func (f Filter) Admits(p Payload) bool {
	return f.admits(&p)
}

func (f *Filter) admits(p *Payload) bool {
	if f.TenantID == "" || p.TenantID != f.TenantID {
		return false
	}
	if f.Subscopes {
		// Contains: an empty org or repo on either side matches.
		if f.OrgID != "" && p.OrgID != "" && p.OrgID != f.OrgID {
			return false
		}
		if f.RepoID != "" && p.RepoID != "" && p.RepoID != f.RepoID {
			return false
		}
	} else {
		// Sees: the point's scope is the filter's or above it.
		if p.OrgID != "" && p.OrgID != f.OrgID {
			return false
		}
		if p.RepoID != "" && (p.RepoID != f.RepoID || p.OrgID != f.OrgID) {
			return false
		}
	}
	return f.AllUsers || !p.Private() || p.UserID == f.ReaderUserID
}

// narrowsTo is the caller's half of Match.
func (f *Filter) narrowsTo(p *Payload) bool {
	switch {
	case f.UserID != "" && p.UserID != f.UserID,
		len(f.Types) > 0 && !slices.Contains(f.Types, p.Type),
		len(f.Visibility) > 0 && !slices.Contains(f.Visibility, p.Visibility),
		f.SubjectType != "" && p.SubjectType != f.SubjectType,
		f.SubjectID != "" && p.SubjectID != f.SubjectID,
		f.ProjectID != "" && p.ProjectID != f.ProjectID,
		f.SessionID != "" && p.SessionID != f.SessionID,
		!f.CreatedAfter.IsZero() && p.CreatedAt.Before(f.CreatedAfter),
		!f.CreatedBefore.IsZero() && !p.CreatedAt.Before(f.CreatedBefore):
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(p.Tags, t) {
			return false
		}
	}
	return true
}

// Validate reports a point that must not be written into an index of dim
// dimensions.
func (p Point) Validate(dim int) error {
	if p.ID == "" {
		return fmt.Errorf("%w: point: empty id", ErrInvalid)
	}
	if p.Payload.MemoryID != "" && p.Payload.MemoryID != p.ID {
		return fmt.Errorf("%w: point %s: payload memory id %q differs", ErrInvalid, p.ID, p.Payload.MemoryID)
	}
	if p.Payload.TenantID == "" {
		return fmt.Errorf("%w: point %s: tenant_id required", ErrInvalid, p.ID)
	}
	if err := CheckVector(p.Vector, dim); err != nil {
		return fmt.Errorf("point %s: %w", p.ID, err)
	}
	return nil
}

// CheckVector reports a vector that is not usable in an index of dim
// dimensions: wrong length (ErrDimension), NaN or infinite components, or all
// zeros (ErrInvalid).
func CheckVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dim)
	}
	var sum float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: component %d is %v", ErrInvalid, i, x)
		}
		sum += f * f
	}
	if sum == 0 {
		return fmt.Errorf("%w: zero vector", ErrInvalid)
	}
	return nil
}

// ValidateBatch checks every point of a batch, and that no id appears twice,
// so that a backend can refuse the whole batch before writing any of it.
func ValidateBatch(pts []Point, dim int) error {
	seen := make(map[string]struct{}, len(pts))
	for _, p := range pts {
		if err := p.Validate(dim); err != nil {
			return err
		}
		if _, dup := seen[p.ID]; dup {
			return fmt.Errorf("%w: point %s appears twice in one batch", ErrInvalid, p.ID)
		}
		seen[p.ID] = struct{}{}
	}
	return nil
}

// Normalize returns a unit-length copy of v (v must have passed CheckVector).
func Normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// SortHits orders hits best first, ties by ID ascending: the order every
// Index returns.
func SortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}
