package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// VerifyRequest asks whether the citations an answer used all came from
// one read_context call.
type VerifyRequest struct {
	Scope     *graph.Scope
	ContextID string
	Citations []graph.Citation
}

// CitationCheck is one citation that failed verification, and why.
type CitationCheck struct {
	Citation graph.Citation `json:"citation"`
	Reason   string         `json:"reason"`
}

// VerifyResponse reports every citation that did not come from the context.
type VerifyResponse struct {
	ContextID string `json:"context_id"`
	// Valid is true when every citation came from the context.
	Valid   bool            `json:"valid"`
	Checked int             `json:"checked"`
	Invalid []CitationCheck `json:"invalid"`
}

// VerifyCitations checks citations against the receipt of read_context call
// contextID. A citation passes when the receipt holds a citation of the
// same repository, element and version; a chunk key must be one the
// receipt handed out, and a byte range must lie inside the range of the
// receipt's citation. A context outside the principal's scope, or one
// citing a memory the principal may not read (another user's private
// memory, a record beneath its scope), is ErrNotFound: verifying says what
// a context held, so it is a read of every element the context cites.
func (e *Engine) VerifyCitations(ctx context.Context, p graph.Principal, r VerifyRequest) (VerifyResponse, error) {
	switch {
	case r.ContextID == "":
		return VerifyResponse{}, &graph.FieldError{Field: "context_id", Message: "required"}
	case len(r.Citations) == 0:
		return VerifyResponse{}, &graph.FieldError{Field: "citations", Message: "required"}
	case len(r.Citations) > MaxVerifyCitations:
		return VerifyResponse{}, &graph.FieldError{Field: "citations", Message: fmt.Sprintf("more than %d citations", MaxVerifyCitations)}
	}
	f, err := readFilter(e.policy.Current(), p, r.Scope, graph.Filter{})
	if err != nil {
		return VerifyResponse{}, err
	}
	rc, err := e.store.GetContextReceipt(ctx, f, r.ContextID)
	var erased map[string]bool
	if err == nil {
		erased, err = e.mayReadCited(ctx, f, rc.Citations)
	}
	if err != nil {
		return VerifyResponse{}, fmt.Errorf("context %s: %w", r.ContextID, err)
	}
	resp := VerifyResponse{ContextID: rc.ID, Checked: len(r.Citations), Invalid: []CitationCheck{}}
	for _, c := range r.Citations {
		reason := checkCitation(rc.Citations, c)
		if reason == "" && erased[c.ElementID] {
			reason = "element erased since" // its content is gone: nothing backs the citation
		}
		if reason != "" {
			resp.Invalid = append(resp.Invalid, CitationCheck{Citation: c, Reason: reason})
		}
	}
	resp.Valid = len(resp.Invalid) == 0
	return resp, nil
}

// mayReadCited is ErrNotFound unless f's reader may read every element
// cited (whatever its status now, erased included: a tombstone keeps the
// fields the access rule reads); it returns the erased ones.
func (e *Engine) mayReadCited(ctx context.Context, f graph.Filter, cs []graph.Citation) (map[string]bool, error) {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if !slices.Contains(ids, c.ElementID) {
			ids = append(ids, c.ElementID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	f.Statuses = append(slices.Clone(allStatuses), graph.StatusErased)
	ms, err := e.store.GetMemories(ctx, f, ids)
	if err != nil {
		return nil, err
	}
	if len(ms) < len(ids) {
		return nil, graph.ErrNotFound
	}
	erased := map[string]bool{}
	for _, m := range ms {
		if m.Status == graph.StatusErased {
			erased[m.ID] = true
		}
	}
	return erased, nil
}

// rangeInside reports whether [start, end) lies inside what g handed out:
// anywhere when g has no range (the whole version), nowhere when g's range
// is malformed (half set; a receipt should never hold one, the fuzz target
// found that it used to panic on it).
func rangeInside(start, end int, g graph.Citation) bool {
	switch {
	case g.Start == nil && g.End == nil:
		return true
	case g.Start == nil || g.End == nil:
		return false
	}
	return start >= *g.Start && end <= *g.End
}

// checkCitation returns why c is not backed by given, or "" when it is.
func checkCitation(given []graph.Citation, c graph.Citation) string {
	if c.ElementID == "" || c.VersionID == "" {
		return "element_id and version_id are required"
	}
	if (c.Start == nil) != (c.End == nil) || (c.Start != nil && (*c.Start < 0 || *c.End < *c.Start)) {
		return "start and end must come together with 0 <= start <= end"
	}
	reason := "element not in this context"
	for _, g := range given {
		if g.ElementID != c.ElementID {
			continue
		}
		if g.VersionID != c.VersionID {
			reason = "version not in this context"
			continue
		}
		if c.RepositoryID != "" && g.RepositoryID != c.RepositoryID {
			reason = "repository_id does not match the context"
			continue
		}
		if c.ChunkKey != "" && g.ChunkKey != c.ChunkKey {
			reason = "chunk not in this context"
			continue
		}
		if c.Start != nil && !rangeInside(*c.Start, *c.End, g) {
			reason = "range outside what the context returned"
			continue
		}
		return ""
	}
	return reason
}
