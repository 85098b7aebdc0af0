package server

import (
	"time"

	"github.com/gin-gonic/gin"
)

// observe records each request's latency by route pattern, method and
// status when the server has metrics. It runs first, so it sees the
// status of a recovered panic too.
func (s *Server) observe(c *gin.Context) {
	if s.metrics == nil {
		c.Next()
		return
	}
	start := time.Now()
	c.Next()
	s.metrics.ObserveRequest(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
}

// serveMetrics serves GET /metrics on the API listener to a principal
// with the admin permission: the figures span every tenant. Operators who
// scrape without a key use a separate metrics listener (mnemo serve
// --metrics-addr), meant for a private network.
func (s *Server) serveMetrics(c *gin.Context) {
	if err := s.engine.AuthorizeStats(principal(c)); err != nil {
		s.fail(c, err)
		return
	}
	s.metrics.Handler().ServeHTTP(c.Writer, c.Request)
}
