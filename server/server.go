package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server/metrics"
)

// HealthCheck reports whether one dependency can serve.
type HealthCheck func(ctx context.Context) error

// Options configures a Server. Engine is required; a nil Logger discards;
// MaxBodyBytes defaults to 4 MiB and RequestTimeout to 30 s.
type Options struct {
	Engine *engine.Engine
	Keys   map[string]graph.Principal // API key -> principal
	// Health are checks reported by /healthz beside the engine's own
	// probes (vector index, embedder): name -> check.
	Health       map[string]HealthCheck
	Logger       *slog.Logger
	MaxBodyBytes int64
	// RequestTimeout is the deadline of each request's context: handlers
	// and the engine stop when it passes and answer 504.
	RequestTimeout time.Duration
	// PolicyLoader reloads the policy for POST /v1/admin/policy/reload;
	// nil answers 501.
	PolicyLoader func() (*policy.Policy, error)
	// Metrics, when set, records every request and is served at
	// GET /metrics to API keys with the admin permission (metrics.go).
	Metrics *metrics.Metrics
}

// Server is the HTTP API. It implements http.Handler.
type Server struct {
	engine     *engine.Engine
	keys       []keyEntry
	health     map[string]HealthCheck
	log        *slog.Logger
	maxBody    int64
	timeout    time.Duration
	loadPolicy func() (*policy.Policy, error)
	metrics    *metrics.Metrics
	router     *gin.Engine
	openAPI    []byte   // the document GET /openapi.json serves
	mounts     []string // paths Mount serves: other protocols, not in the document
}

type keyEntry struct {
	hash      [32]byte
	principal graph.Principal
}

// New builds the router.
func New(o Options) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("server: engine is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	s := &Server{engine: o.Engine, health: map[string]HealthCheck{}, log: o.Logger, maxBody: o.MaxBodyBytes,
		timeout: o.RequestTimeout, loadPolicy: o.PolicyLoader, metrics: o.Metrics}
	for name, probe := range o.Engine.Probes() {
		s.health[name] = probe
	}
	maps.Copy(s.health, o.Health)
	doc, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	s.openAPI = doc
	for k, p := range o.Keys {
		s.keys = append(s.keys, keyEntry{hash: sha256.Sum256([]byte(k)), principal: p})
	}
	r := gin.New()
	r.Use(s.observe, gin.CustomRecoveryWithWriter(io.Discard, s.recovered), s.logRequests, s.deadline)
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) { s.fail(c, errorf(http.StatusNotFound, "not_found", "", "no such route")) })
	r.NoMethod(func(c *gin.Context) {
		s.fail(c, errorf(http.StatusMethodNotAllowed, "method_not_allowed", "", "method not allowed"))
	})
	// Every route has its operation in operations() (openapi_ops.go):
	// TestOpenAPIRoutes names the ones that do not.
	r.GET("/healthz", s.healthz)
	r.GET("/openapi.json", s.serveOpenAPI)
	if s.metrics != nil {
		r.GET("/metrics", s.authenticate, s.serveMetrics)
	}
	v1 := r.Group("/v1", s.authenticate)
	v1.POST("/memories", s.createMemory)
	v1.POST("/memories\\:batch", s.createMemories)
	v1.GET("/librarian/requests", s.listGateRequests)
	v1.GET("/librarian/requests/:id", s.gateRequest)
	v1.POST("/librarian/requests/:id", s.decideGateRequest) // {id}:approve, {id}:reject
	v1.POST("/admin/policy/reload", s.reloadPolicy)
	v1.GET("/memories", s.listMemories)
	v1.GET("/memories/:id", s.getMemory)
	v1.POST("/memories/:id/edits", s.proposeEdit)
	v1.GET("/memories/:id/edits", s.listEdits)
	v1.POST("/edits/:id", s.decideEdit) // {id}:approve, {id}:reject
	v1.POST("/relations", s.createRelation)
	v1.DELETE("/relations/:id", s.deleteRelation)
	v1.GET("/memories/:id/relations", s.listRelations)
	v1.GET("/audit", s.listAudit)
	v1.POST("/proposals", s.createProposal)
	v1.GET("/proposals", s.listProposals)
	v1.GET("/proposals/:id", s.getProposal)
	v1.POST("/proposals/:id", s.proposalStep) // {id}:accept, {id}:reject, {id}:rebase
	v1.POST("/baselines\\:promote", s.promoteBaseline)
	v1.GET("/baselines", s.listBaselines)
	v1.DELETE("/memories/:id", s.archiveMemory) // archive (forget.go)
	v1.POST("/memories/:id", s.memoryAction)    // {id}:restore, {id}:erase
	v1.POST("/users/:user", s.userAction)       // {user}:erase
	v1.POST("/search", s.search)
	v1.POST("/context", s.readContext)
	v1.POST("/context/bundle", s.contextBundle)
	v1.POST("/capsules", s.createCapsule)
	v1.GET("/capsules", s.listCapsules)
	v1.GET("/capsules/:id", s.getCapsule)
	v1.POST("/capsules/:id", s.revokeCapsule) // {id}:revoke
	v1.POST("/citations/verify", s.verifyCitations)
	s.router = r
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Timeouts bound each connection of an http.Server; zero fields take the
// defaults of config.Defaults.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included: a client that
	// sends its body a byte at a time is cut off when it passes.
	Read time.Duration
	// Write bounds the time from the end of a request's headers to the
	// end of its answer; it must exceed Read plus the request timeout.
	Write time.Duration
	// Idle closes a keep-alive connection idle this long.
	Idle time.Duration
}

// NewHTTPServer returns the http.Server that serves h under t.
func NewHTTPServer(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cmp.Or(t.ReadHeader, 10*time.Second),
		ReadTimeout:       cmp.Or(t.Read, 30*time.Second),
		WriteTimeout:      cmp.Or(t.Write, 75*time.Second),
		IdleTimeout:       cmp.Or(t.Idle, 120*time.Second),
		MaxHeaderBytes:    64 << 10,
	}
}

// recovered answers a handler's panic as every other internal error, with
// the error body, and logs it.
func (s *Server) recovered(c *gin.Context, v any) {
	s.log.Error("handler panicked", "path", c.FullPath(), "panic", v, "stack", string(debug.Stack()))
	s.fail(c, fmt.Errorf("panic: %v", v))
}

// DefaultRequestTimeout is a request's deadline when Options names none.
const DefaultRequestTimeout = 30 * time.Second

// deadline gives each request's context the server's timeout.
func (s *Server) deadline(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.timeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// authenticate maps the API key (Authorization: Bearer KEY, the scheme in
// any case, or X-API-Key) to its principal, comparing in constant time.
func (s *Server) authenticate(c *gin.Context) {
	key := c.GetHeader("X-API-Key")
	if scheme, cred, ok := strings.Cut(strings.TrimSpace(c.GetHeader("Authorization")), " "); key == "" && ok &&
		strings.EqualFold(scheme, "Bearer") {
		key = strings.TrimSpace(cred)
	}
	p, err := s.Principal(key)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Set(principalKey, p)
	c.Next()
}

// Principal maps an API key to its principal, comparing in constant time.
// A missing or unknown key is an error whose Describe is the 401 the API
// answers.
func (s *Server) Principal(key string) (graph.Principal, error) {
	if key == "" {
		return graph.Principal{}, errorf(http.StatusUnauthorized, "unauthenticated", "", "missing API key (Authorization: Bearer KEY)")
	}
	sum := sha256.Sum256([]byte(key))
	for _, k := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], k.hash[:]) == 1 {
			return k.principal, nil
		}
	}
	return graph.Principal{}, errorf(http.StatusUnauthorized, "unauthenticated", "", "unknown API key")
}

// Mount serves h at path (and beneath it) behind the API's authentication,
// request logging, panic recovery and deadline: how the MCP and A2A
// endpoints share the API's keys. The key is checked once, here; h reads
// the principal it names from the request's context (PrincipalFrom). Call
// it before serving.
func (s *Server) Mount(path string, h http.Handler) {
	s.mounts = append(s.mounts, path)
	g := s.router.Group(path, s.authenticate, func(c *gin.Context) {
		c.Request = c.Request.WithContext(WithPrincipal(c.Request.Context(), principal(c)))
	})
	g.Any("", gin.WrapH(h))
	g.Any("/*rest", gin.WrapH(h))
}

type principalCtxKey struct{}

// WithPrincipal is ctx carrying p as the authenticated caller.
func WithPrincipal(ctx context.Context, p graph.Principal) context.Context {
	return context.WithValue(ctx, principalCtxKey{}, p)
}

// PrincipalFrom is the caller Mount authenticated for a request, from the
// request's context (or any context derived from it).
func PrincipalFrom(ctx context.Context) (graph.Principal, bool) {
	p, ok := ctx.Value(principalCtxKey{}).(graph.Principal)
	return p, ok
}

// RequirePrincipal answers the API's 401 to a request whose context
// carries no principal (h served outside Mount), and passes the others to
// h: the mounted protocols' guard against being served unauthenticated.
func RequirePrincipal(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := PrincipalFrom(r.Context()); !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(errorBody{Error: apiError{Code: "unauthenticated",
				Message: "missing API key (Authorization: Bearer KEY)"}})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MountPublic serves h for GET at path without authentication (the A2A
// agent card, which says how to authenticate), with the API's request
// logging, panic recovery and deadline. Call it before serving.
func (s *Server) MountPublic(path string, h http.Handler) {
	s.router.GET(path, gin.WrapH(h))
}

const principalKey = "mnemo.principal"

func principal(c *gin.Context) graph.Principal {
	p, _ := c.Get(principalKey)
	pr, _ := p.(graph.Principal)
	return pr
}

func (s *Server) logRequests(c *gin.Context) {
	c.Next()
	s.log.Debug("request", "method", c.Request.Method, "path", c.Request.URL.Path, "status", c.Writer.Status())
}

// healthCheckTimeout bounds each /healthz check.
const healthCheckTimeout = 3 * time.Second

// healthz runs every check at once, each within healthCheckTimeout, and
// reports each: "ok" or "down: why". Any check down answers 503.
func (s *Server) healthz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), healthCheckTimeout)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(s.health))
	for name, check := range s.health {
		go func() { results <- result{name, check(ctx)} }()
	}
	status, overall := map[string]string{}, http.StatusOK
wait:
	for range s.health {
		select {
		case r := <-results:
			status[r.name] = "ok"
			if r.err != nil {
				status[r.name], overall = "down: "+r.err.Error(), http.StatusServiceUnavailable
			}
		case <-ctx.Done():
			// A check that ignores its context is reported as silent; its
			// goroutine ends when the check returns (results is buffered).
			for name := range s.health {
				if _, ok := status[name]; !ok {
					status[name], overall = "down: no answer within "+healthCheckTimeout.String(), http.StatusServiceUnavailable
				}
			}
			break wait
		}
	}
	state := "ok"
	if overall != http.StatusOK {
		state = "degraded"
	}
	c.JSON(overall, health{Status: state, Checks: status})
}

// health answers GET /healthz.
type health struct {
	// Status is "ok", or "degraded" when a check is down (503).
	Status string `json:"status"`
	// Checks maps each check to "ok" or "down: why".
	Checks map[string]string `json:"checks"`
}
