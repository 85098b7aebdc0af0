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
	if err == nil {
		err = e.mayReadCited(ctx, f, rc.Citations)
	}
	if err != nil {
		return VerifyResponse{}, fmt.Errorf("context %s: %w", r.ContextID, err)
	}
	resp := VerifyResponse{ContextID: rc.ID, Checked: len(r.Citations), Invalid: []CitationCheck{}}
	for _, c := range r.Citations {
		if reason := checkCitation(rc.Citations, c); reason != "" {
			resp.Invalid = append(resp.Invalid, CitationCheck{Citation: c, Reason: reason})
		}
	}
	resp.Valid = len(resp.Invalid) == 0
	return resp, nil
}

// mayReadCited is ErrNotFound unless f's reader may read every element
// cited (whatever its status now).
func (e *Engine) mayReadCited(ctx context.Context, f graph.Filter, cs []graph.Citation) error {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if !slices.Contains(ids, c.ElementID) {
			ids = append(ids, c.ElementID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	f.Statuses = allStatuses
	ms, err := e.store.GetMemories(ctx, f, ids)
	if err != nil {
		return err
	}
	if len(ms) < len(ids) {
		return graph.ErrNotFound
	}
	return nil
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
		if c.Start != nil && g.Start != nil && (*c.Start < *g.Start || *c.End > *g.End) {
			reason = "range outside what the context returned"
			continue
		}
		return ""
	}
	return reason
}
