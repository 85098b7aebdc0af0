package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// capsuleRequest is the body of POST /v1/capsules.
type capsuleRequest struct {
	Scope       *graph.Scope `json:"scope"`
	Subject     string       `json:"subject"`
	Audience    []string     `json:"audience"`
	MemoryIDs   []string     `json:"memory_ids"`
	VersionIDs  []string     `json:"version_ids"`
	DecisionIDs []string     `json:"decision_ids"`
	TTLSeconds  int64        `json:"ttl_seconds"`
}

// createCapsule serves POST /v1/capsules: 201 with the capsule (the
// first request's, on a retry with the same Idempotency-Key).
func (s *Server) createCapsule(c *gin.Context) {
	var req capsuleRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	r := engine.CapsuleRequest{Scope: req.Scope, Subject: req.Subject, Audience: req.Audience, MemoryIDs: req.MemoryIDs,
		VersionIDs: req.VersionIDs, DecisionIDs: req.DecisionIDs, TTLSeconds: req.TTLSeconds,
		IdempotencyKey: c.GetHeader(idempotencyHeader)}
	cp, err := s.engine.CreateCapsule(c.Request.Context(), principal(c), r)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, cp)
}

// listCapsules serves GET /v1/capsules?sent=&limit=&cursor=: the live
// capsules addressed to the caller (sent=true: those it created), newest
// first, with their items.
func (s *Server) listCapsules(c *gin.Context) {
	q := c.Request.URL.Query()
	r := engine.CapsuleListRequest{Cursor: q.Get("cursor")}
	switch q.Get("sent") {
	case "", "false":
	case "true":
		r.Sent = true
	default:
		s.fail(c, errorf(http.StatusBadRequest, "invalid", "sent", "sent must be true or false"))
		return
	}
	if v := q.Get("limit"); v != "" {
		var err error
		if r.Limit, err = strconv.Atoi(v); err != nil || r.Limit < 1 || r.Limit > engine.MaxCapsulePage {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "limit",
				"limit must be a whole number from 1 to "+strconv.Itoa(engine.MaxCapsulePage)))
			return
		}
	}
	cs, next, err := s.engine.ListCapsules(c.Request.Context(), principal(c), r)
	if err != nil {
		s.fail(c, err)
		return
	}
	if cs == nil {
		cs = []engine.CapsuleView{}
	}
	c.JSON(http.StatusOK, capsuleList{Capsules: cs, NextCursor: next})
}

// getCapsule serves GET /v1/capsules/{id}: 404 unless the caller is in its
// audience or created it, and it is live.
func (s *Server) getCapsule(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.engine.GetCapsule(c.Request.Context(), principal(c), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// revokeCapsule serves POST /v1/capsules/{id}:revoke, with an optional
// body {"reason": "..."}: 200 with the revoked capsule; 403 for an agent
// of its audience, 404 for anyone else or a capsule no longer live.
func (s *Server) revokeCapsule(c *gin.Context) {
	id, _, ok := s.customMethod(c, "id", "revoke")
	if !ok {
		return
	}
	reason, ok := s.reason(c)
	if !ok {
		return
	}
	cp, err := s.engine.RevokeCapsule(c.Request.Context(), principal(c), id, reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, cp)
}

// bundleRequest is the body of POST /v1/context/bundle.
type bundleRequest struct {
	Scope              *graph.Scope `json:"scope"`
	SessionID          string       `json:"session_id"`
	ProjectID          string       `json:"project_id"`
	Channel            string       `json:"channel"`
	IncludeQuarantined bool         `json:"include_quarantined"`
	TokenBudget        int          `json:"token_budget"`
}

// contextBundle serves POST /v1/context/bundle: the caller's context
// bundle (engine.ContextBundle).
func (s *Server) contextBundle(c *gin.Context) {
	var req bundleRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	b, err := s.engine.ContextBundle(c.Request.Context(), principal(c), engine.BundleRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, b)
}

// capsuleList is GET /v1/capsules's answer: a page of capsules and the
// cursor of the next ("" at the end).
type capsuleList struct {
	Capsules   []engine.CapsuleView `json:"capsules"`
	NextCursor string               `json:"next_cursor"`
}

// idempotencyHeader names the key that makes a create safe to retry
// (POST /v1/capsules, POST /v1/baselines:promote): a retry with the same
// key, by the same principal, answers what the first request created
// (docs/curation.md, "Idempotent creates").
const idempotencyHeader = "Idempotency-Key"
