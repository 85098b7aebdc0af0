package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// proposalRequest is the body of POST /v1/proposals.
type proposalRequest struct {
	MemoryID      string `json:"memory_id"`
	VersionID     string `json:"version_id"`
	VersionNumber int    `json:"version_number"`
	Title         string `json:"title"`
	Content       string `json:"content"`
}

// proposalStepRequest is the optional body of :accept (reason: a note),
// :reject (reason, required) and :rebase (new title or content).
type proposalStepRequest struct {
	Reason  string `json:"reason"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// createProposal serves POST /v1/proposals: 201 with the open proposal.
func (s *Server) createProposal(c *gin.Context) {
	var req proposalRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	pr, err := s.engine.Propose(c.Request.Context(), principal(c), engine.ProposalRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, proposalAnswer{Proposal: pr})
}

// getProposal serves GET /v1/proposals/{id}.
func (s *Server) getProposal(c *gin.Context) {
	pr, err := s.engine.GetProposal(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, proposalAnswer{Proposal: pr})
}

// listProposals serves GET /v1/proposals?memory_id=&status=&limit=.
func (s *Server) listProposals(c *gin.Context) {
	q := engine.ProposalList{MemoryID: c.Query("memory_id"), Status: graph.ProposalStatus(c.Query("status"))}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > graph.MaxListLimit {
			s.fail(c, &graph.FieldError{Field: "limit", Message: "must be from 1 to 1000"})
			return
		}
		q.Limit = n
	}
	prs, err := s.engine.ListProposals(c.Request.Context(), principal(c), q)
	if err != nil {
		s.fail(c, err)
		return
	}
	if prs == nil {
		prs = []graph.Proposal{}
	}
	c.JSON(http.StatusOK, proposalList{Proposals: prs})
}

// proposalStep serves POST /v1/proposals/{id}:accept, :reject and
// :rebase. A proposal that is not open, or (accept) pinned to a version
// that is no longer current, is 409; one the caller cannot see, 404.
func (s *Server) proposalStep(c *gin.Context) {
	id, verb, ok := s.customMethod(c, "id", "accept", "reject", "rebase")
	if !ok {
		return
	}
	var req proposalStepRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	var (
		res    engine.ProposalResult
		err    error
		status = http.StatusOK
	)
	ctx, p := c.Request.Context(), principal(c)
	switch verb {
	case "accept":
		res, err = s.engine.AcceptProposal(ctx, p, id, req.Reason)
	case "reject":
		res, err = s.engine.RejectProposal(ctx, p, id, req.Reason)
	case "rebase":
		res, err = s.engine.RebaseProposal(ctx, p, id, engine.RebaseRequest{Title: req.Title, Content: req.Content})
		status = http.StatusCreated
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(status, res)
}

// promoteBaseline serves POST /v1/baselines:promote: 201 with the
// baseline now published (the first request's, on a retry with the same
// Idempotency-Key).
func (s *Server) promoteBaseline(c *gin.Context) {
	var req engine.PromoteRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	req.IdempotencyKey = c.GetHeader(idempotencyHeader)
	b, err := s.engine.PromoteBaseline(c.Request.Context(), principal(c), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, baselineAnswer{Baseline: b})
}

// listBaselines serves GET /v1/baselines?org_id=&repo_id=&limit=: newest
// first, each marked published when it is its repository's.
func (s *Server) listBaselines(c *gin.Context) {
	var scope *graph.Scope
	if o, r := c.Query("org_id"), c.Query("repo_id"); o != "" || r != "" {
		scope = &graph.Scope{OrgID: o, RepoID: r}
	}
	limit := 0
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > graph.MaxListLimit {
			s.fail(c, &graph.FieldError{Field: "limit", Message: "must be from 1 to 1000"})
			return
		}
		limit = n
	}
	bs, err := s.engine.ListBaselines(c.Request.Context(), principal(c), scope, limit)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, baselineList{Baselines: bs})
}

// The answers of the proposal and baseline routes (named, so the OpenAPI
// document can describe them).
type (
	proposalAnswer struct {
		Proposal graph.Proposal `json:"proposal"`
	}
	proposalList struct {
		Proposals []graph.Proposal `json:"proposals"`
	}
	baselineAnswer struct {
		Baseline engine.BaselineView `json:"baseline"`
	}
	baselineList struct {
		Baselines []engine.BaselineView `json:"baselines"`
	}
)
