// Package a2a serves mnemo to other agents over the Agent2Agent protocol
// (github.com/a2aproject/a2a-go): an agent card at
// /.well-known/agent-card.json and JSON-RPC (message/send, message/stream,
// tasks/get, tasks/cancel) at /a2a, over the same engine and API keys as
// the HTTP API. Three skills: remember (ingest), recall (search) and
// research (a planned search with up to 3 attempts; see research.go).
//
// A message picks its skill with metadata {"skill": "..."} (on the message
// or on a data part); a message naming none is a research question. The
// text parts are the content (remember) or the question (recall,
// research); a data part carries options (remember: type, title, tags,
// visibility, session_id; recall: top_k, mode, types).
//
// Every message becomes a task: submitted -> working -> completed, with the
// answer as an artifact (a text part for people, a data part for programs);
// input the engine refuses ends rejected and a server failure failed, with
// the same message the HTTP API would answer. Tasks live in this process
// (bounded, see taskStore) and only their creator can read or cancel them.
package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/server"
)

// ProtocolVersion is the A2A protocol revision a2a-go v0.3.3 speaks.
const ProtocolVersion = "0.3.0"

// Path is where the JSON-RPC endpoint is mounted on `mnemo serve`.
const Path = "/a2a"

// Options configures the A2A server. Engine is required.
type Options struct {
	Engine *engine.Engine
	// Version is the agent card's version.
	Version string
	// MaxTasks bounds the tasks kept in memory (default 10,000; the oldest
	// go first).
	MaxTasks int
	Logger   *slog.Logger
}

// Server is the A2A agent over one engine.
type Server struct {
	engine  *engine.Engine
	tasks   *taskStore
	handler a2asrv.RequestHandler
	version string
	log     *slog.Logger
}

// New builds the A2A server.
func New(o Options) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("a2a: engine is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = 10_000
	}
	s := &Server{engine: o.Engine, tasks: newTaskStore(o.MaxTasks), version: o.Version, log: o.Logger}
	s.handler = a2asrv.NewHandler(&executor{s: s}, a2asrv.WithTaskStore(s.tasks), a2asrv.WithLogger(o.Logger))
	return s, nil
}

// Handler is the JSON-RPC endpoint, to be served under server.Mount,
// which checks the bearer key once and puts the principal it names in the
// request's context: the caller of every skill. Served without a principal
// it answers the API's 401.
func (s *Server) Handler() http.Handler {
	return server.RequirePrincipal(a2asrv.NewJSONRPCHandler(s.handler))
}

// CardHandler serves the agent card (public, as the protocol wants: it
// says how to authenticate). Its URL is the endpoint on the host the card
// was fetched from (X-Forwarded-Proto and -Host honoured), so a card read
// through a proxy points back through it.
func (s *Server) CardHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, host := "http", r.Host
		if r.TLS != nil {
			scheme = "https"
		}
		if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
			scheme = p
		}
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			host = h
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_ = json.NewEncoder(w).Encode(s.Card(scheme + "://" + host + Path))
	})
}

// Card is the agent card with its endpoint at url.
func (s *Server) Card(url string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "mnemo",
		Description: "Graph-first memory for agents: remember facts, notes, decisions and tasks; recall them " +
			"by meaning, keywords and the entity graph; research a question with cited answers. No LLM in the loop.",
		URL:                url,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            s.version,
		DocumentationURL:   "https://github.com/mnemo-dev/mnemo/blob/main/docs/interfaces.md#a2a",
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"apiKey": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "a mnemo API key (MNEMO_API_KEYS), as for the HTTP API"},
		},
		Security: []a2a.SecurityRequirements{{"apiKey": {}}},
		Skills: []a2a.AgentSkill{
			{ID: skillRemember, Name: "Remember", Tags: []string{"memory", "write"},
				Description: "Store the message's text as a memory (deduplicated, superseding an older value, or queued for review as the policy says). " +
					`Options in a data part: type, title, tags, visibility, session_id. Metadata {"skill":"remember"}.`,
				Examples: []string{"The staging database moved to db-2.internal on 2026-11-20."}},
			{ID: skillRecall, Name: "Recall", Tags: []string{"memory", "search"},
				Description: "Search memories for the message's text (hybrid: graph walk, vectors, keywords; a date in it, " +
					"such as \"in August 2023\" or \"last week\", ranks memories from then first). " +
					`Options in a data part: top_k, mode (hybrid|graph|vector|keyword), types. Metadata {"skill":"recall"}.`,
				Examples: []string{"staging database host"}},
			{ID: skillResearch, Name: "Research", Tags: []string{"memory", "research", "citations"},
				Description: "Answer a question from memory: plans the search (types, terms, time range), retries at most 3 times " +
					"(hybrid; then top 20 with relaxed filters; then keywords only), flags contradictions and cites every claim " +
					"by memory and version; marked partial with a warning when nothing answered. The default skill.",
				Examples: []string{"What did we decide about the staging database last week?"}},
		},
	}
}

// describe is err as the client sees it: the HTTP API's message, and
// whether it was the caller's fault (4xx: the task is rejected) or the
// server's (failed).
func (s *Server) describe(skill string, err error) (msg string, rejected bool) {
	status, _, msg, field := server.Describe(err)
	if status >= 500 {
		s.log.Error("a2a skill failed", "skill", skill, "err", err)
	}
	if field != "" {
		msg = fmt.Sprintf("%s (field %s)", msg, field)
	}
	return msg, status < 500
}
