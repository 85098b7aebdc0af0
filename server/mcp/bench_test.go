package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
)

// BenchmarkMCPOverhead measures what MCP adds to an engine call: each
// iteration runs the same call once on the engine directly and once as a
// tool call through the SDK's client over an in-memory transport (JSON-RPC
// both ways, input schema validation, the result marshalled and decoded by
// the client), on a 10k-memory synthetic corpus in SQLite, same principal,
// same run. "get" reads one memory (a ~1.6 KB answer: what a call costs
// whatever it does); "recall" searches (10 results with neighbours, ~28 KB
// at detail full: the part that grows with the answer), at both detail
// levels. It reports the tool's answer bytes (structured content), the
// p50 and p95 of each side, the p50 of the per-call difference, and the
// CPU time of each per call (steadier than wall time on a loaded
// machine), in ms. recall_answer and recall_server take the engine out
// (precomputed answers): recall_answer is a whole call through the SDK's
// client, recall_server the server's share of the same call (rawClient).
func BenchmarkMCPOverhead(b *testing.B) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	require.NoError(b, err)
	defer store.Close()
	scope := graph.Scope{TenantID: "bench"}
	corpus := storetest.Corpus(scope, 42, 10_000)
	for i := range corpus.Inputs {
		// The corpus's memories belong to 20 users; tenant-wide
		// visibility lets the benchmark's reader see them all.
		corpus.Inputs[i].Memory.Visibility = graph.VisibilityGlobal
	}
	var ids []string
	for i := 0; i < len(corpus.Inputs); i += 1000 {
		created, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
		require.NoError(b, err)
		for _, c := range created {
			ids = append(ids, c.Memory.ID)
		}
	}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(b, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(b, err)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder})
	require.NoError(b, err)
	p := graph.Principal{ID: "bench", Roles: []string{"reader"}, Scope: scope}
	m, err := New(Options{Engine: eng, Principal: &p})
	require.NoError(b, err)
	cs := connect(b, m.sdk)

	ents, words := corpus.EntityQueries(200), corpus.KeywordQueries(200)
	queries := make([]string, len(ents))
	for i := range ents {
		queries[i] = "what about " + strings.Join(ents[i], " and ") + " " + words[i]
	}
	// The first search builds the keyword index; neither side pays for it.
	_, err = eng.Search(ctx, p, engine.SearchRequest{Query: queries[0]})
	require.NoError(b, err)

	b.Run("get", func(b *testing.B) {
		overhead(b, cs, "get", func(i int) (any, map[string]any, error) {
			id := ids[(i*7919)%len(ids)]
			v, err := eng.GetWith(ctx, p, id, engine.GetOptions{})
			return v, map[string]any{"id": id}, err
		}, func(want any, got map[string]any) bool {
			return got["memory"].(map[string]any)["id"] == want.(engine.MemoryView).Memory.ID
		})
	})
	sameResults := func(want any, got map[string]any) bool {
		return len(got["results"].([]any)) == len(want.(engine.SearchResponse).Results)
	}
	for _, detail := range []string{detailCompact, detailFull} {
		b.Run("recall/detail="+detail, func(b *testing.B) {
			overhead(b, cs, "recall", func(i int) (any, map[string]any, error) {
				q := queries[i%len(queries)]
				r, err := eng.Search(ctx, p, engine.SearchRequest{Query: q})
				return r, map[string]any{"query": q, "detail": detail}, err
			}, sameResults)
		})
	}
	// recall_answer is the MCP part alone, without the engine's noise:
	// the recall tool, registered as mnemo registers it, answering the
	// engine's answers computed before the loop, at each detail, for the
	// default limit (10) and for limit 3. Its CPU per call is all MCP: the
	// handler, the SDK's server and client, both ways. The tool's limit
	// argument picks the answer: 20 answers of each limit.
	answers := make([]engine.SearchResponse, 40)
	for i := range answers {
		r := engine.SearchRequest{Query: queries[i%20]}
		if i >= 20 {
			r.Limit = 3
		}
		answers[i], err = eng.Search(ctx, p, r)
		require.NoError(b, err)
	}
	fixed := &Server{sdk: sdk.NewServer(&sdk.Implementation{Name: "fixed", Version: "v0"}, nil), fixed: &p, log: m.log}
	require.NoError(b, fixed.addRecall(func(_ context.Context, _ graph.Principal, in RecallInput) (engine.SearchResponse, error) {
		return answers[in.Limit], nil
	}))
	fcs := connect(b, fixed.sdk)
	for _, c := range []struct {
		name, detail string
		from         int
	}{
		{"detail=compact", detailCompact, 0}, {"detail=full", detailFull, 0},
		{"detail=compact/limit=3", detailCompact, 20}, {"detail=full/limit=3", detailFull, 20},
	} {
		b.Run("recall_answer/"+c.name, func(b *testing.B) {
			overhead(b, fcs, "recall", func(i int) (any, map[string]any, error) {
				k := c.from + i%20
				return answers[k], map[string]any{"query": "q", "limit": k, "detail": c.detail}, nil
			}, sameResults)
		})
	}
	// recall_server is the same calls through rawClient: the server's
	// share of each (rawClient's doc), to read beside recall_answer.
	raw := connectRaw(b, fixed.sdk)
	for _, c := range []struct {
		name, detail string
		from         int
	}{
		{"detail=compact", detailCompact, 0}, {"detail=compact/limit=3", detailCompact, 20},
	} {
		b.Run("recall_server/"+c.name, func(b *testing.B) {
			var lat []time.Duration
			var size int
			c0 := stats.CPUTime()
			for i := 0; b.Loop(); i++ {
				k := c.from + i%20
				start := time.Now()
				res, err := raw.call("tools/call", map[string]any{"name": "recall",
					"arguments": map[string]any{"query": "q", "limit": k, "detail": c.detail}})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				var r struct {
					IsError    bool `json:"isError"`
					Structured struct {
						Results []json.RawMessage `json:"results"`
					} `json:"structuredContent"`
				}
				if i == 0 {
					// Decoded once, outside the loop's cost: the answer is
					// the engine's, not an error.
					require.NoError(b, json.Unmarshal(res, &r))
					require.False(b, r.IsError, string(res))
					require.Len(b, r.Structured.Results, len(answers[k].Results))
					size = len(res)
				}
			}
			cpu := stats.CPUTime() - c0
			b.StopTimer()
			p := stats.Percentiles(lat)
			b.ReportMetric(float64(size), "response_bytes")
			b.ReportMetric(stats.Milliseconds(p.P50), "server_p50_ms")
			b.ReportMetric(stats.Milliseconds(p.P95), "server_p95_ms")
			b.ReportMetric(stats.Milliseconds(cpu)/float64(len(lat)), "server_cpu_ms/op")
		})
	}
}

// connect serves s on an in-memory transport and connects the SDK's
// client to it, both closed when b ends.
func connect(b *testing.B, s *sdk.Server) *sdk.ClientSession {
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// overhead runs call i on the engine (direct, which also answers the
// tool's arguments) and then as the tool, checks the tool's structured
// answer against the engine's (same), and reports the figures.
func overhead(b *testing.B, cs *sdk.ClientSession, tool string, direct func(i int) (any, map[string]any, error),
	same func(want any, got map[string]any) bool) {
	ctx := context.Background()
	var (
		engineLat, mcpLat, diff []time.Duration
		cpuDirect, cpuMCP       time.Duration
	)
	for i := 0; b.Loop(); i++ {
		c0, start := stats.CPUTime(), time.Now()
		want, args, err := direct(i)
		d, c1 := time.Since(start), stats.CPUTime()
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		v, c2 := time.Since(start), stats.CPUTime()
		cpuDirect, cpuMCP = cpuDirect+c1-c0, cpuMCP+c2-c1
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", tool, err, res.Content)
		}
		if !same(want, res.StructuredContent.(map[string]any)) {
			b.Fatalf("%s answered otherwise than the engine", tool)
		}
		engineLat, mcpLat, diff = append(engineLat, d), append(mcpLat, v), append(diff, v-d)
		if i == 0 {
			raw, _ := json.Marshal(res.StructuredContent)
			b.ReportMetric(float64(len(raw)), "answer_bytes")
		}
	}
	b.StopTimer()
	e, v, d := stats.Percentiles(engineLat), stats.Percentiles(mcpLat), stats.Percentiles(diff)
	b.ReportMetric(stats.Milliseconds(e.P50), "engine_p50_ms")
	b.ReportMetric(stats.Milliseconds(v.P50), "mcp_p50_ms")
	b.ReportMetric(stats.Milliseconds(e.P95), "engine_p95_ms")
	b.ReportMetric(stats.Milliseconds(v.P95), "mcp_p95_ms")
	b.ReportMetric(stats.Milliseconds(d.P50), "overhead_p50_ms")
	n := float64(len(engineLat))
	b.ReportMetric(stats.Milliseconds(cpuDirect)/n, "engine_cpu_ms/op")
	b.ReportMetric(stats.Milliseconds(cpuMCP-cpuDirect)/n, "overhead_cpu_ms/op")
}

// BenchmarkEmptyCall is the floor of any tool call over an in-memory
// transport on the machine at hand: a bare SDK server whose one tool
// answers {"ok":true}. Read BenchmarkMCPOverhead's figures beside it.
func BenchmarkEmptyCall(b *testing.B) {
	ctx := context.Background()
	s := sdk.NewServer(&sdk.Implementation{Name: "empty", Version: "v0"}, nil)
	s.AddTool(&sdk.Tool{Name: "ok", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{StructuredContent: json.RawMessage(`{"ok":true}`),
				Content: []sdk.Content{&sdk.TextContent{Text: `{"ok":true}`}}}, nil
		})
	cs := connect(b, s)
	var lat []time.Duration
	c0 := stats.CPUTime()
	for b.Loop() {
		start := time.Now()
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ok", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	cpu := stats.CPUTime() - c0
	stats.Report(b, lat)
	b.ReportMetric(stats.Milliseconds(cpu)/float64(len(lat)), "cpu_ms/op")
}

// rawClient speaks JSON-RPC to a server over an in-memory transport without
// the SDK's client: it frames requests and reads each response's envelope,
// leaving its result as raw bytes. What a call costs through it is the
// server's share of a call (the SDK's server, mnemo's handler, the
// encoding) and the transport (whose Read still parses each message),
// without a client decoding the answer into values, which an agent's own
// client does in its own process.
type rawClient struct {
	conn sdk.Connection
	next int64
}

func connectRaw(b *testing.B, s *sdk.Server) *rawClient {
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = ss.Close() })
	conn, err := ct.Connect(ctx)
	require.NoError(b, err)
	b.Cleanup(func() { _ = conn.Close() })
	c := &rawClient{conn: conn}
	_, err = c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "v0"}})
	require.NoError(b, err)
	require.NoError(b, conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}))
	return c
}

// call sends one request and returns its result undecoded.
func (c *rawClient) call(method string, params any) (json.RawMessage, error) {
	ctx := context.Background()
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c.next++
	id, err := jsonrpc.MakeID(float64(c.next))
	if err != nil {
		return nil, err
	}
	if err := c.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		return nil, err
	}
	for {
		msg, err := c.conn.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
			if r.Error != nil {
				return nil, r.Error
			}
			return r.Result, nil
		}
	}
}
