package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/metrics"
)

// apiDoc is the server's OpenAPI document as kin-openapi loads it, with a
// matcher for each of its paths.
type apiDoc struct {
	doc   *openapi3.T
	paths []docPath
}

type docPath struct {
	template string
	re       *regexp.Regexp
	names    []string
}

var (
	apiDocOnce sync.Once
	apiDocVal  *apiDoc
	apiDocErr  error
)

// loadAPIDoc loads and validates server.OpenAPI() once per test binary.
func loadAPIDoc(t testing.TB) *apiDoc {
	t.Helper()
	apiDocOnce.Do(func() {
		raw, err := server.OpenAPI()
		if err != nil {
			apiDocErr = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			apiDocErr = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			apiDocErr = err
			return
		}
		d := &apiDoc{doc: doc}
		for _, p := range doc.Paths.InMatchingOrder() {
			d.paths = append(d.paths, compilePath(p))
		}
		apiDocVal = d
	})
	require.NoError(t, apiDocErr, "the OpenAPI document does not load")
	return apiDocVal
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

// compilePath matches a concrete URL path against an OpenAPI template: a
// parameter is one segment or part of one (/v1/edits/{id}:approve).
func compilePath(template string) docPath {
	dp := docPath{template: template}
	expr := "^"
	last := 0
	for _, m := range paramRE.FindAllStringSubmatchIndex(template, -1) {
		expr += regexp.QuoteMeta(template[last:m[0]]) + "([^/]+?)"
		dp.names = append(dp.names, template[m[2]:m[3]])
		last = m[1]
	}
	dp.re = regexp.MustCompile(expr + regexp.QuoteMeta(template[last:]) + "$")
	return dp
}

// route finds the operation a request is for and its path parameters;
// nil when no documented path and method match (the router's own 404 and
// 405).
func (d *apiDoc) route(r *http.Request) (*routers.Route, map[string]string) {
	for _, p := range d.paths {
		m := p.re.FindStringSubmatch(r.URL.Path)
		if m == nil {
			continue
		}
		item := d.doc.Paths.Value(p.template)
		op := item.GetOperation(r.Method)
		if op == nil {
			continue
		}
		params := map[string]string{}
		for i, n := range p.names {
			params[n] = m[i+1]
		}
		return &routers.Route{Spec: d.doc, Path: p.template, PathItem: item, Method: r.Method, Operation: op}, params
	}
	return nil, nil
}

// conform serves h and checks every answer against the OpenAPI document:
// a documented status, the content type and a body that matches the
// schema. The server's HTTP tests run through it, so each response they
// provoke, good or bad, is checked against the document.
func conform(t testing.TB, h http.Handler) http.Handler {
	doc := loadAPIDoc(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		if err := doc.check(r, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\nbody: %.500s",
				r.Method, r.URL.Path, rec.Code, err, rec.Body.Bytes())
		}
	})
}

// check validates one answer; an undocumented path is only allowed the
// router's own 404 and 405.
func (d *apiDoc) check(r *http.Request, status int, h http.Header, body []byte) error {
	route, params := d.route(r)
	if route == nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil
		}
		return &undocumented{r.Method + " " + r.URL.Path}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status, Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(r.Context(), in)
}

type undocumented struct{ route string }

func (u *undocumented) Error() string { return u.route + " is not in the OpenAPI document" }

// ginPath is the router pattern an OpenAPI path is served by: {x} becomes
// :x, and a custom method after a parameter ({id}:approve) is read by the
// handler of :x; a colon in a literal segment is escaped
// (/v1/memories\:batch).
func ginPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, "{"):
			segs[i] = ":" + s[1:strings.IndexByte(s, '}')]
		case strings.Contains(s, ":"):
			segs[i] = strings.ReplaceAll(s, ":", `\:`)
		}
	}
	return strings.Join(segs, "/")
}

// TestOpenAPIRoutes fails when the router and the OpenAPI document
// disagree: a route the server registers that no operation documents, or
// a documented method and path the server does not serve (for a custom
// method such as {id}:approve, the handler must accept the verb: a request
// to it must not be answered "no such route").
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadAPIDoc(t)
	a := newIngAPI(t, func(o *server.Options) { o.Metrics = metrics.New(metrics.Options{}) })
	srv := a.handler.(*server.Server)
	srv.Mount("/elsewhere", http.NotFoundHandler()) // another protocol: not in the document
	served := map[[2]string]bool{}
	for _, r := range server.RoutesOf(srv) {
		served[r] = true
	}
	documented := map[[2]string][]string{} // gin route -> OpenAPI paths
	for path, item := range doc.doc.Paths.Map() {
		for method := range item.Operations() {
			k := [2]string{method, ginPath(path)}
			documented[k] = append(documented[k], path)
		}
	}
	for r := range served {
		if _, ok := documented[r]; !ok {
			t.Errorf("the server serves %s %s, which the OpenAPI document lacks: add its operation to operations() in server/openapi_ops.go", r[0], r[1])
		}
	}
	for r, paths := range documented {
		if !served[r] {
			t.Errorf("the OpenAPI document has %s %s, which the server does not serve (no route %s %s in server.New)", r[0], paths, r[0], r[1])
			continue
		}
		for _, p := range paths {
			url := paramRE.ReplaceAllString(p, "doc-check")
			if code, msg := a.send(t, r[0], url); code == http.StatusMethodNotAllowed || routeless(code, msg) {
				t.Errorf("the OpenAPI document has %s %s, which the server does not serve: %s %s answered %d %q", r[0], p, r[0], url, code, msg)
			}
		}
		// A route that reads a custom method names the ones it takes when
		// asked for another ("no such route: use {id}:approve or {id}:reject").
		if !strings.Contains(paths[0], "}:") {
			continue
		}
		_, msg := a.send(t, r[0], paramRE.ReplaceAllString(strings.Split(paths[0], "}:")[0]+"}", "doc-check")+":no-such-verb")
		for _, m := range verbRE.FindAllStringSubmatch(msg, -1) {
			p := strings.Split(paths[0], "}:")[0] + "}:" + m[1]
			if !slices.Contains(paths, p) {
				t.Errorf("the server serves %s %s, which the OpenAPI document lacks: add its operation to operations() in server/openapi_ops.go", r[0], p)
			}
		}
	}
}

var verbRE = regexp.MustCompile(`\{\w+\}:([\w-]+)`)

// routeless is an answer from no route: the router's 404, or a custom
// method handler's for a verb it does not take.
func routeless(code int, msg string) bool {
	return code == http.StatusNotFound && strings.HasPrefix(msg, "no such route")
}

// send sends a bodiless request as admin and returns the status and the
// error message, if any.
func (a *ingAPI) send(t *testing.T, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer admin-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct{ Error struct{ Message string } }
	_ = json.NewDecoder(resp.Body).Decode(&body) // /metrics answers text
	return resp.StatusCode, body.Error.Message
}

// TestOpenAPIDocument checks the document served at /openapi.json: no key
// needed, OpenAPI 3.1, valid as kin-openapi reads it, one operationId per
// operation, and every operation answers the error envelope.
func TestOpenAPIDocument(t *testing.T) {
	a := newIngAPI(t)
	resp, err := http.Get(a.url + "/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	want, err := server.OpenAPI()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(raw))

	doc := loadAPIDoc(t)
	assert.True(t, doc.doc.IsOpenAPI31OrLater(), "openapi is %s", doc.doc.OpenAPI)
	ids := map[string]string{}
	for path, item := range doc.doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %s is on %s and %s", op.OperationID, prev, where)
			}
			ids[op.OperationID] = where
			bad := op.Responses.Value("400")
			if assert.NotNil(t, bad, "%s documents no 400", where) {
				assert.Equal(t, "#/components/schemas/ErrorBody", bad.Value.Content.Get("application/json").Schema.Ref, where)
			}
		}
	}
	var envelope map[string]any
	require.NoError(t, json.Unmarshal(want, &envelope))
	assert.Contains(t, envelope["components"].(map[string]any)["schemas"], "ErrorBody")
}

// TestOpenAPIConform checks conform itself: an answer the document does
// not allow is reported.
func TestOpenAPIConform(t *testing.T) {
	doc := loadAPIDoc(t)
	gin.SetMode(gin.TestMode)
	cases := []struct {
		name   string
		method string
		path   string
		status int
		body   string
		ok     bool
	}{
		{"error envelope", "GET", "/v1/memories/x", 404, `{"error":{"code":"not_found","message":"m","field":""}}`, true},
		{"error without field", "GET", "/v1/memories/x", 404, `{"error":{"code":"not_found","message":"m"}}`, false},
		{"undocumented status", "GET", "/v1/memories/x", 418, `{"error":{"code":"x","message":"m","field":""}}`, false},
		{"unknown member", "GET", "/v1/audit", 200, `{"events":[],"next_cursor":"","extra":1}`, false},
		{"custom method", "POST", "/v1/edits/e1:approve", 409, `{"error":{"code":"conflict","message":"m","field":""}}`, true},
		{"unrouted 404", "GET", "/nowhere", 404, `{}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.path, nil)
			h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
			err := doc.check(r, c.status, h, []byte(c.body))
			if c.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}
