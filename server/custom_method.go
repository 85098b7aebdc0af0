package server

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/graph"
)

// customMethod splits a custom-method path segment ("{id}:verb", AIP-136)
// of route parameter param into the id and the verb, which must be one of
// verbs. Otherwise it answers 404 (a verb not among them) or the id's
// field error, and ok is false.
func (s *Server) customMethod(c *gin.Context, param string, verbs ...string) (id, verb string, ok bool) {
	id, verb, found := strings.Cut(c.Param(param), ":")
	known := false
	for _, v := range verbs {
		known = known || v == verb
	}
	if !found || !known {
		uses := make([]string, len(verbs))
		for i, v := range verbs {
			uses[i] = "{" + param + "}:" + v
		}
		use := uses[len(uses)-1]
		if len(uses) > 1 {
			use = strings.Join(uses[:len(uses)-1], ", ") + " or " + use
		}
		s.fail(c, errorf(http.StatusNotFound, "not_found", "", "no such route: use "+use))
		return "", "", false
	}
	if err := graph.CheckID(param, id); err != nil {
		s.fail(c, err)
		return "", "", false
	}
	return id, verb, true
}
