package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

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
	if v, ok := given(q, "limit"); ok {
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
	c.JSON(http.StatusOK, auditPage{Events: evs, NextCursor: next})
}

// auditPage answers GET /v1/audit.
type auditPage struct {
	Events     []graph.AuditEvent `json:"events"`
	NextCursor string             `json:"next_cursor"`
}
