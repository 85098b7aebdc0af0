package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/graph"
)

// listGateRequests serves GET /v1/librarian/requests?status=&limit=&cursor=
// (status pending by default; approve permission).
func (s *Server) listGateRequests(c *gin.Context) {
	q := c.Request.URL.Query()
	page := graph.Page{Cursor: q.Get("cursor")}
	if v, ok := given(q, "limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "limit", "limit must be a whole number from 1 to 1000"))
			return
		}
		page.Limit = n
	}
	reqs, next, err := s.engine.ListGateRequests(c.Request.Context(), principal(c), graph.GateStatus(q.Get("status")), page)
	if err != nil {
		s.fail(c, err)
		return
	}
	if reqs == nil {
		reqs = []graph.GateRequest{}
	}
	c.JSON(http.StatusOK, gatePage{Requests: reqs, NextCursor: next})
}

// gatePage answers GET /v1/librarian/requests.
type gatePage struct {
	Requests   []graph.GateRequest `json:"requests"`
	NextCursor string              `json:"next_cursor"`
}

// gateRequest serves GET /v1/librarian/requests/{id}.
func (s *Server) gateRequest(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.engine.GetGateRequest(c.Request.Context(), principal(c), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// decisionRequest is the optional body of :approve and :reject.
type decisionRequest struct {
	// Note (approve) or reason (reject), recorded in the audit event.
	Reason string `json:"reason"`
}

// decideGateRequest serves POST /v1/librarian/requests/{id}:approve and
// POST /v1/librarian/requests/{id}:reject (approve permission). Approve
// answers the written memory's result; reject answers the reason and a
// suggested fix. A request that is not pending is 409.
func (s *Server) decideGateRequest(c *gin.Context) {
	id, verb, ok := s.customMethod(c, "id", "approve", "reject")
	if !ok {
		return
	}
	var req decisionRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	ctx, p := c.Request.Context(), principal(c)
	var (
		d   any
		err error
	)
	if verb == "approve" {
		d, err = s.engine.ApproveGateRequest(ctx, p, id, req.Reason)
	} else {
		d, err = s.engine.RejectGateRequest(ctx, p, id, req.Reason)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}
