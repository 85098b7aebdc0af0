package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/graph"
)

// forgetRequest is the optional body of an archive, restore or erase.
type forgetRequest struct {
	// Reason is recorded in the audit event. For an erase it must not
	// quote the memory: it outlives the content (a ticket number, "user
	// request").
	Reason string `json:"reason"`
}

// reason decodes the optional body.
func (s *Server) reason(c *gin.Context) (string, bool) {
	var req forgetRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return "", false
		}
	}
	return req.Reason, true
}

// idAndReason reads the {id} of a DELETE and its optional body; on bad
// input it answers the error and reports false.
func (s *Server) idAndReason(c *gin.Context) (string, string, bool) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return "", "", false
	}
	reason, ok := s.reason(c)
	return id, reason, ok
}

// archiveMemory serves DELETE /v1/memories/{id}: the memory is archived
// (hidden from reads that do not ask for archived memories, restorable with
// {id}:restore). It answers the memory as it is now.
func (s *Server) archiveMemory(c *gin.Context) {
	id, reason, ok := s.idAndReason(c)
	if !ok {
		return
	}
	out, err := s.engine.Archive(c.Request.Context(), principal(c), id, reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// memoryAction serves POST /v1/memories/{id}:restore (an archived memory
// becomes active again) and POST /v1/memories/{id}:erase (its content is
// removed for good; docs/forgetting.md).
func (s *Server) memoryAction(c *gin.Context) {
	id, verb, ok := s.customMethod(c, "id", "restore", "erase")
	if !ok {
		return
	}
	reason, ok := s.reason(c)
	if !ok {
		return
	}
	ctx, p := c.Request.Context(), principal(c)
	var (
		out any
		err error
	)
	if verb == "restore" {
		out, err = s.engine.Restore(ctx, p, id, reason)
	} else {
		out, err = s.engine.Erase(ctx, p, id, reason)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// userAction serves POST /v1/users/{user}:erase: every memory of the user
// that the principal reaches is erased.
func (s *Server) userAction(c *gin.Context) {
	user, _, ok := s.customMethod(c, "user", "erase")
	if !ok {
		return
	}
	reason, ok := s.reason(c)
	if !ok {
		return
	}
	out, err := s.engine.EraseUser(c.Request.Context(), principal(c), user, reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
