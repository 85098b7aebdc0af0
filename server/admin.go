package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// reloadPolicy serves POST /v1/admin/policy/reload (policy_reload, an
// operator permission that "*" does not grant; the default policy's
// operator role holds it): it reloads the policy file the
// server was started with. A bad file is refused with 400 and its
// file:line errors, and the running policy stays.
func (s *Server) reloadPolicy(c *gin.Context) {
	if s.loadPolicy == nil {
		s.fail(c, errorf(http.StatusNotImplemented, "not_implemented", "", "this server has no policy loader"))
		return
	}
	name, err := s.engine.ReloadPolicy(c.Request.Context(), principal(c), s.loadPolicy)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, reloaded{Status: "reloaded", Policy: name})
}

// reloaded answers POST /v1/admin/policy/reload.
type reloaded struct {
	Status string `json:"status"` // "reloaded"
	Policy string `json:"policy"` // the policy's name
}
