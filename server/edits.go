package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// editRequest is the body of POST /v1/memories/{id}/edits.
type editRequest struct {
	Kind       graph.EditKind `json:"kind"`
	VersionID  string         `json:"version_id"`
	Content    string         `json:"content"`
	Importance *float64       `json:"importance"`
	Delta      *float64       `json:"delta"`
	Channel    string         `json:"channel"`
	Reason     string         `json:"reason"`
}

// proposeEdit serves POST /v1/memories/{id}/edits: 201 with the edit (pending,
// or approved when the policy auto-approves it for the caller's role) and
// its preview.
func (s *Server) proposeEdit(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	var req editRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.engine.ProposeEdit(c.Request.Context(), principal(c), id, engine.EditRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

// listEdits serves GET /v1/memories/{id}/edits?status=.
func (s *Server) listEdits(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	eds, err := s.engine.ListMemoryEdits(c.Request.Context(), principal(c), id, graph.EditStatus(c.Query("status")))
	if err != nil {
		s.fail(c, err)
		return
	}
	if eds == nil {
		eds = []graph.Edit{}
	}
	c.JSON(http.StatusOK, gin.H{"edits": eds})
}

// decideEdit serves POST /v1/edits/{id}:approve and POST
// /v1/edits/{id}:reject, with an optional body {"reason": "..."}. An edit
// that is not pending is 409; one the caller cannot see, 404.
func (s *Server) decideEdit(c *gin.Context) {
	id, verb, ok := strings.Cut(c.Param("id"), ":")
	if !ok || (verb != "approve" && verb != "reject") {
		s.fail(c, errorf(http.StatusNotFound, "not_found", "", "no such route: use {id}:approve or {id}:reject"))
		return
	}
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	var req decisionRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	res, err := s.engine.DecideEdit(c.Request.Context(), principal(c), id, verb == "approve", req.Reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// listAudit serves GET /v1/audit?memory_id=&actor=&action=&from=&to=&limit=
// &cursor= (permission audit_read): events oldest first, next_cursor for
// the next page ("" on the last).
func (s *Server) listAudit(c *gin.Context) {
	q := c.Request.URL.Query()
	r := engine.AuditRequest{MemoryID: q.Get("memory_id"), ActorID: q.Get("actor"), Action: q.Get("action"), Cursor: q.Get("cursor")}
	var err error
	if r.From, err = queryTime(q.Get("from"), "from"); err != nil {
		s.fail(c, err)
		return
	}
	if r.To, err = queryTime(q.Get("to"), "to"); err != nil {
		s.fail(c, err)
		return
	}
	if v := q.Get("limit"); v != "" {
		if r.Limit, err = strconv.Atoi(v); err != nil || r.Limit < 1 || r.Limit > 1000 {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "limit", "limit must be a whole number from 1 to 1000"))
			return
		}
	}
	evs, next, err := s.engine.ListAudit(c.Request.Context(), principal(c), r)
	if err != nil {
		s.fail(c, err)
		return
	}
	if evs == nil {
		evs = []graph.AuditEvent{}
	}
	c.JSON(http.StatusOK, gin.H{"events": evs, "next_cursor": next})
}
