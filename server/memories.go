package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// getMemory serves GET /v1/memories/{id}?channel=&include_quarantined=
// &as_of=&known_at=: the memory's effective view (approved edits applied),
// as of a valid time and as known at a transaction time when asked
// (docs/time.md).
func (s *Server) getMemory(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	q := c.Request.URL.Query()
	o := engine.GetOptions{Channel: q.Get("channel")}
	if v, ok := given(q, "include_quarantined"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "include_quarantined", "include_quarantined must be true or false"))
			return
		}
		o.IncludeQuarantined = b
	}
	var err error
	if o.TimeTravel, err = timeTravel(q.Get("as_of"), q.Get("known_at")); err != nil {
		s.fail(c, err)
		return
	}
	view, err := s.engine.GetWith(c.Request.Context(), principal(c), id, o)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, view)
}

// listMemories serves GET /v1/memories?type=&user_id=&tag=&after=&before=
// &days_back=&status=&org_id=&repo_id=&limit=&cursor=. Repeated or
// comma-separated values of type, tag and status are ORed for type and
// status, ANDed for tag.
func (s *Server) listMemories(c *gin.Context) {
	q := c.Request.URL.Query()
	for _, param := range []string{"type", "tag", "status"} {
		if n := len(multi(q[param])); n > graph.MaxFilterValues {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", param,
				fmt.Sprintf("%s lists %d values, more than %d", param, n, graph.MaxFilterValues)))
			return
		}
	}
	r := engine.ListRequest{
		Types: multi(q["type"]), UserID: q.Get("user_id"), Tags: multi(q["tag"]), Cursor: q.Get("cursor"),
	}
	for _, st := range multi(q["status"]) {
		r.Statuses = append(r.Statuses, graph.Status(st))
	}
	if org, repo := q.Get("org_id"), q.Get("repo_id"); org != "" || repo != "" {
		r.Scope = &graph.Scope{OrgID: org, RepoID: repo}
	}
	var err error
	if r.CreatedAfter, err = queryTime(q.Get("after"), "after"); err != nil {
		s.fail(c, err)
		return
	}
	if r.CreatedBefore, err = queryTime(q.Get("before"), "before"); err != nil {
		s.fail(c, err)
		return
	}
	if v, ok := given(q, "days_back"); ok {
		days, err := strconv.Atoi(v)
		if err != nil || days <= 0 {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "days_back", "days_back must be a positive whole number"))
			return
		}
		if after := time.Now().UTC().AddDate(0, 0, -days); after.After(r.CreatedAfter) {
			r.CreatedAfter = after
		}
	}
	if v, ok := given(q, "limit"); ok {
		if r.Limit, err = strconv.Atoi(v); err != nil || r.Limit < 1 || r.Limit > 1000 {
			s.fail(c, errorf(http.StatusBadRequest, "invalid", "limit", "limit must be a whole number from 1 to 1000"))
			return
		}
	}
	l, err := s.engine.List(c.Request.Context(), principal(c), r)
	if err != nil {
		s.fail(c, err)
		return
	}
	if l.Memories == nil {
		l.Memories = []graph.Memory{}
	}
	c.JSON(http.StatusOK, l)
}

// multi flattens repeated and comma-separated query values.
func multi(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// given returns a query parameter's first value and whether it was sent
// at all: a number or a boolean sent empty (limit=) is refused, not read
// as absent.
func given(q url.Values, name string) (string, bool) {
	if vs := q[name]; len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

// queryTime parses RFC 3339 or a plain date (YYYY-MM-DD, UTC).
func queryTime(v, field string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errorf(http.StatusBadRequest, "invalid", field, field+" must be RFC 3339 or YYYY-MM-DD")
}
