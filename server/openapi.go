package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// The OpenAPI 3.1 document of the API, served at GET /openapi.json without
// a key (it describes the API's shape, holds no data, and a client needs it
// before it has a key). It is built once from the operation table in
// openapi_ops.go: each operation names its path, parameters and the Go
// types its handler decodes and answers, and the request and response
// schemas are inferred from those types (JSON Schema 2020-12, by
// github.com/google/jsonschema-go), so a field added to a request or
// response struct is in the document without anyone writing it twice.
// TestOpenAPIRoutes fails when a route of the router and an operation of
// the table disagree; docs/interfaces.md says how to add a route.

// openAPIVersion is the OpenAPI revision the document follows.
const openAPIVersion = "3.1.0"

type openAPIDoc struct {
	OpenAPI    string                       `json:"openapi"`
	Info       openAPIInfo                  `json:"info"`
	Security   []map[string][]string        `json:"security"`
	Tags       []openAPITag                 `json:"tags,omitempty"`
	Paths      map[string]map[string]*apiOp `json:"paths"`
	Components openAPIComponents            `json:"components"`
}

type openAPIInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type openAPITag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type openAPIComponents struct {
	Schemas         map[string]*jsonschema.Schema `json:"schemas"`
	SecuritySchemes map[string]securityScheme     `json:"securitySchemes"`
}

type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme,omitempty"`
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
}

// apiOp is an OpenAPI operation object.
type apiOp struct {
	OperationID string                  `json:"operationId"`
	Summary     string                  `json:"summary"`
	Description string                  `json:"description,omitempty"`
	Tags        []string                `json:"tags,omitempty"`
	Security    *[]map[string][]string  `json:"security,omitempty"`
	Parameters  []apiParam              `json:"parameters,omitempty"`
	RequestBody *apiBody                `json:"requestBody,omitempty"`
	Responses   map[string]*apiResponse `json:"responses"`
}

type apiParam struct {
	Name        string             `json:"name"`
	In          string             `json:"in"`
	Description string             `json:"description,omitempty"`
	Required    bool               `json:"required,omitempty"`
	Explode     *bool              `json:"explode,omitempty"`
	Schema      *jsonschema.Schema `json:"schema"`
}

type apiBody struct {
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required"`
	Content     map[string]apiMedium `json:"content"`
}

type apiMedium struct {
	Schema *jsonschema.Schema `json:"schema"`
}

type apiResponse struct {
	Description string               `json:"description"`
	Content     map[string]apiMedium `json:"content,omitempty"`
	Links       map[string]apiLink   `json:"links,omitempty"`
}

// apiLink says which operation an answer's value can be passed to: what
// lets a client (and schemathesis' stateful phase) follow a memory from
// its creation to its edits and their approval.
type apiLink struct {
	OperationID string            `json:"operationId"`
	Parameters  map[string]string `json:"parameters"`
}

// serveOpenAPI serves GET /openapi.json.
func (s *Server) serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", s.openAPI)
}

// OpenAPI returns the API's OpenAPI 3.1 document as JSON: what GET
// /openapi.json serves.
func OpenAPI() ([]byte, error) {
	doc, err := buildOpenAPI(operations())
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// schemaBuilder infers schemas from Go types and keeps the named ones in
// components.
type schemaBuilder struct {
	opts  *jsonschema.ForOptions
	named map[string]*jsonschema.Schema
	owner map[string]reflect.Type
}

func buildOpenAPI(ops []operation) (*openAPIDoc, error) {
	b := &schemaBuilder{opts: &jsonschema.ForOptions{TypeSchemas: typeSchemas()},
		named: map[string]*jsonschema.Schema{}, owner: map[string]reflect.Type{}}
	if _, err := b.ref(reflect.TypeFor[errorBody]()); err != nil {
		return nil, err
	}
	doc := &openAPIDoc{
		OpenAPI: openAPIVersion,
		Info: openAPIInfo{Title: "mnemo", Version: "v1", Description: "mnemo's HTTP API: a graph-first memory engine for " +
			"AI agents. Every /v1 route needs an API key (Authorization: Bearer KEY, or X-API-Key: KEY); " +
			"what a key may do is its role's permissions in the policy (docs/security.md). Every error answers " +
			"{\"error\": {\"code\", \"message\", \"field\"}} with the status that says what went wrong."},
		Security: []map[string][]string{{"bearer": {}}, {"apiKey": {}}},
		Tags:     openAPITags,
		Paths:    map[string]map[string]*apiOp{},
		Components: openAPIComponents{Schemas: b.named, SecuritySchemes: map[string]securityScheme{
			"bearer": {Type: "http", Scheme: "bearer", Description: "an API key from MNEMO_API_KEYS (docs/security.md)"},
			"apiKey": {Type: "apiKey", In: "header", Name: "X-API-Key", Description: "the same API key, in a header of its own"},
		}},
	}
	for _, op := range ops {
		o, err := b.operation(op)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", op.method, op.path, err)
		}
		item := doc.Paths[op.path]
		if item == nil {
			item = map[string]*apiOp{}
			doc.Paths[op.path] = item
		}
		m := strings.ToLower(op.method)
		if item[m] != nil {
			return nil, fmt.Errorf("openapi: %s %s is in the table twice", op.method, op.path)
		}
		item[m] = o
	}
	return doc, nil
}

func (b *schemaBuilder) operation(op operation) (*apiOp, error) {
	o := &apiOp{OperationID: op.id, Summary: op.summary, Description: op.doc, Tags: []string{op.tag},
		Responses: map[string]*apiResponse{}}
	if op.public {
		o.Security = &[]map[string][]string{}
	}
	for _, name := range pathParams(op.path) {
		o.Parameters = append(o.Parameters, apiParam{Name: name, In: "path", Required: true,
			Description: "an identifier (visible characters only, at most " + strconv.Itoa(graph.MaxIDLen) + " bytes)",
			Schema:      &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}})
	}
	for _, q := range op.query {
		o.Parameters = append(o.Parameters, q.param())
	}
	if op.idempotent {
		o.Parameters = append(o.Parameters, apiParam{Name: idempotencyHeader, In: "header",
			Description: "makes the create safe to retry: a request with the key of an earlier one by the same caller " +
				"answers what that one created and writes nothing (409 when its fields differ or the result is no longer readable)",
			Schema: &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1), MaxLength: jsonschema.Ptr(engine.MaxIdempotencyKey),
				Pattern: "^[!-~]+$"}})
	}
	if op.body != nil {
		s, err := b.request(op)
		if err != nil {
			return nil, err
		}
		o.RequestBody = &apiBody{Required: !op.bodyOptional, Content: map[string]apiMedium{"application/json": {Schema: s}}}
	}
	for status, t := range op.answers {
		r := &apiResponse{Description: http.StatusText(status)}
		if t != nil {
			s, err := b.ref(t)
			if err != nil {
				return nil, err
			}
			r.Content = map[string]apiMedium{"application/json": {Schema: s}}
		}
		o.Responses[strconv.Itoa(status)] = r
	}
	for _, l := range op.links {
		r := o.Responses[strconv.Itoa(l.status)]
		if r == nil {
			return nil, fmt.Errorf("a link from status %d, which the operation does not answer", l.status)
		}
		if r.Links == nil {
			r.Links = map[string]apiLink{}
		}
		for _, to := range l.to {
			r.Links[to] = apiLink{OperationID: to, Parameters: map[string]string{l.param: "$response.body#" + l.pointer}}
		}
	}
	if op.text != "" {
		o.Responses["200"] = &apiResponse{Description: http.StatusText(http.StatusOK),
			Content: map[string]apiMedium{op.text: {Schema: &jsonschema.Schema{Type: "string"}}}}
	}
	errRef := &jsonschema.Schema{Ref: "#/components/schemas/ErrorBody"}
	for _, status := range op.errorStatuses() {
		if _, ok := o.Responses[strconv.Itoa(status)]; ok {
			continue
		}
		o.Responses[strconv.Itoa(status)] = &apiResponse{Description: http.StatusText(status) + ": the error envelope",
			Content: map[string]apiMedium{"application/json": {Schema: errRef}}}
	}
	return o, nil
}

// request is the schema of op's body: inferred from its Go type with every
// member optional but those op requires, members unknown to the type
// refused (as decode refuses them), then op's own adjustments.
func (b *schemaBuilder) request(op operation) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(reflect.TypeOf(op.body), b.opts)
	if err != nil {
		return nil, err
	}
	optional(s)
	mustHave(s, op.required...)
	if op.adjust != nil {
		op.adjust(s)
	}
	return s, nil
}

// optional drops "required" from s and every object schema inside it,
// and lets every member be null: decode reads a member left out or null
// as its zero value.
func optional(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Required = nil
	for _, p := range s.Properties {
		optional(p)
		nullable(p)
	}
	optional(s.Items)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		optional(s.AdditionalProperties)
	}
}

// mustHave makes s's members names required, not null, and, for strings,
// not blank: what the engine refuses as "required".
func mustHave(s *jsonschema.Schema, names ...string) {
	s.Required = names
	for _, n := range names {
		p := prop(s, n)
		p.Types = slices.DeleteFunc(p.Types, func(t string) bool { return t == "null" })
		if len(p.Types) == 1 {
			p.Type, p.Types = p.Types[0], nil
		}
		p.Enum = slices.DeleteFunc(p.Enum, func(v any) bool { return v == nil })
		if p.Type == "string" && len(p.Enum) == 0 {
			p.MinLength, p.Pattern = jsonschema.Ptr(1), `\S`
		}
	}
}

// nullable lets s be null too.
func nullable(s *jsonschema.Schema) {
	if s.Type != "" {
		s.Types, s.Type = []string{s.Type}, ""
	}
	if len(s.Types) > 0 && !slices.Contains(s.Types, "null") {
		s.Types = append(s.Types, "null")
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(nil)) {
		s.Enum = append(s.Enum, nil)
	}
}

// ref returns a reference to t's schema in components, inferring it the
// first time.
func (b *schemaBuilder) ref(t reflect.Type) (*jsonschema.Schema, error) {
	name := t.Name()
	if name != "" {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	if name == "" {
		return nil, fmt.Errorf("response type %s has no name", t)
	}
	if prev, ok := b.owner[name]; ok && prev != t {
		return nil, fmt.Errorf("two response types named %s: %s and %s", name, prev, t)
	}
	if _, ok := b.named[name]; !ok {
		s, err := jsonschema.ForType(t, b.opts)
		if err != nil {
			return nil, err
		}
		b.named[name], b.owner[name] = s, t
	}
	return &jsonschema.Schema{Ref: "#/components/schemas/" + name}, nil
}

// pathParams are the names in path's {braces}, in order.
func pathParams(path string) []string {
	var out []string
	for rest := path; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		out = append(out, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
}

// typeSchemas are the schemas of the types whose inferred schema would say
// too little: times and the string types with a closed set of values.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	enum := func(vals ...string) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "string"}
		for _, v := range vals {
			s.Enum = append(s.Enum, v)
		}
		return s
	}
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time]():        {Type: "string", Format: "date-time"},
		reflect.TypeFor[json.RawMessage]():  {},
		reflect.TypeFor[graph.Status]():     enum(statuses(graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted, graph.StatusErased)...),
		reflect.TypeFor[graph.Visibility](): enum(statuses(graph.VisibilitySession, graph.VisibilityUser, graph.VisibilityProject, graph.VisibilityPolicy, graph.VisibilityGlobal)...),
		reflect.TypeFor[graph.EditKind]():   enum(statuses(graph.EditRetract, graph.EditAmend, graph.EditQuarantine, graph.EditAttenuate, graph.EditBlock)...),
		reflect.TypeFor[graph.EditStatus](): enum(statuses(graph.EditPending, graph.EditApproved, graph.EditRejected)...),
		reflect.TypeFor[graph.GateStatus](): enum(statuses(graph.GatePending, graph.GateApproved, graph.GateRejected)...),
		reflect.TypeFor[graph.SourceKind](): enum(statuses(graph.SourceAuthored, graph.SourceIngestedEvidence, graph.SourceProposed)...),
		reflect.TypeFor[engine.IngestStatus](): enum(statuses(engine.StatusApproved, engine.StatusSuperseded, engine.StatusUpdated,
			engine.StatusReinforced, engine.StatusPending, engine.StatusRejected)...),
	}
}

func statuses[S ~string](vals ...S) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

// queryParam documents one query parameter. A string parameter sent
// empty reads as absent, so an enum holds "" too.
type queryParam struct {
	name, doc string
	kind      string // "string" (default), "integer", "boolean", "time", "list"
	enum      []string
	min, max  int // integers: bounds when max > 0
}

func (q queryParam) param() apiParam {
	p := apiParam{Name: q.name, In: "query", Description: q.doc}
	switch q.kind {
	case "integer":
		p.Schema = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(float64(q.min))}
		if q.max > 0 {
			p.Schema.Maximum = jsonschema.Ptr(float64(q.max))
		}
	case "boolean":
		p.Schema = &jsonschema.Schema{Type: "boolean"}
	case "time":
		p.Schema = &jsonschema.Schema{Type: "string", AnyOf: []*jsonschema.Schema{{Const: jsonschema.Ptr[any]("")}, {Format: "date-time"}, {Format: "date"}}}
	case "list":
		item := &jsonschema.Schema{Type: "string"}
		for _, v := range q.values() {
			item.Enum = append(item.Enum, v)
		}
		p.Schema = &jsonschema.Schema{Type: "array", Items: item, MaxItems: jsonschema.Ptr(graph.MaxFilterValues)}
		p.Explode = jsonschema.Ptr(true)
	default:
		p.Schema = &jsonschema.Schema{Type: "string"}
		for _, v := range q.values() {
			p.Schema.Enum = append(p.Schema.Enum, v)
		}
	}
	return p
}

// values are the enum of q's schema: none, or "" and q.enum.
func (q queryParam) values() []string {
	if len(q.enum) == 0 {
		return nil
	}
	return append([]string{""}, q.enum...)
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error apiError `json:"error"`
}

// errorStatuses are the error statuses op may answer: those of every
// authenticated request, those of a request with a body, and op's own.
func (op operation) errorStatuses() []int {
	out := []int{http.StatusBadRequest, http.StatusInternalServerError}
	if !op.public {
		// 501: the store lacks a capability the route needs (graph.ErrUnsupported).
		out = append(out, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusNotImplemented, http.StatusGatewayTimeout)
	}
	if op.body != nil {
		out = append(out, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	out = append(out, op.errors...)
	slices.Sort(out)
	return slices.Compact(out)
}
