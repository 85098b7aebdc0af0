package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/server"
)

// Options configures the MCP server. Engine is required; a nil Logger
// discards.
type Options struct {
	Engine *engine.Engine
	// Principal, when set, is the caller of every tool call (stdio: the
	// principal of MNEMO_API_KEY). When nil, each call's principal is the
	// one the HTTP handler's bearer key names; a call without one fails.
	Principal *graph.Principal
	// Version is reported to clients in the server's implementation info.
	Version string
	Logger  *slog.Logger
}

// Server is the MCP server with mnemo's tools registered.
type Server struct {
	sdk    *sdk.Server
	engine *engine.Engine
	fixed  *graph.Principal
	log    *slog.Logger
}

// New builds the MCP server and registers its tools.
func New(o Options) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("mcp: engine is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{engine: o.Engine, fixed: o.Principal, log: o.Logger}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "mnemo", Title: "mnemo memory", Version: o.Version},
		&sdk.ServerOptions{Logger: o.Logger, Instructions: instructions})
	if err := s.addTools(); err != nil {
		return nil, err
	}
	return s, nil
}

// instructions tell a client's model what the server is for.
const instructions = `mnemo is a graph-first memory. Use recall (or read_context, which returns ` +
	`version-pinned citations and a context_id) before answering from memory, remember to store ` +
	`what you learn (one fact, decision or note per call), and verify_citations to check that the ` +
	`citations in an answer came from a read_context call.`

// Run serves the MCP protocol on t (stdio for `mnemo mcp`) until ctx ends
// or the client disconnects.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.sdk.Run(ctx, t)
}

// Connect serves one session on t and returns it; tests and benchmarks use
// it with an in-memory transport.
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	return s.sdk.Connect(ctx, t, nil)
}

// Handler is the streamable HTTP endpoint, to be served under
// server.Mount, which checks the bearer key once and puts the principal it
// names in the request's context: every tool call's caller. Served
// without a principal it answers the API's 401. It is stateless (every
// POST is answered on its own with a JSON body, no session lives in the
// process), so any replica can answer any call.
func (s *Server) Handler() http.Handler {
	return server.RequirePrincipal(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log}))
}

// principal is the caller of one tool call: the fixed one (stdio), or the
// one server.Mount put in the HTTP request's context, which the SDK's
// stateless handler passes on to the call's context.
func (s *Server) principal(ctx context.Context) (graph.Principal, error) {
	if s.fixed != nil {
		return *s.fixed, nil
	}
	if p, ok := server.PrincipalFrom(ctx); ok {
		return p, nil
	}
	return graph.Principal{}, errors.New("missing API key (Authorization: Bearer KEY)")
}

// toolError is err as the tool error a client sees: the message the HTTP
// API answers for it. Server-side failures are logged here, once.
func (s *Server) toolError(tool string, err error) error {
	status, _, msg, _ := server.Describe(err)
	if status >= 500 {
		s.log.Error("mcp tool failed", "tool", tool, "err", err)
	}
	return errors.New(msg)
}
