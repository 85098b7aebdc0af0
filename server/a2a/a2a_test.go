package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	mnemoa2a "github.com/mnemo-dev/mnemo/server/a2a"
)

const (
	keyAlice   = "key-alice"
	keyMallory = "key-mallory"
)

var (
	alice   = graph.Principal{ID: "alice", UserID: "alice", Roles: []string{"librarian"}, Scope: graph.Scope{TenantID: "t1"}}
	mallory = graph.Principal{ID: "mallory", UserID: "mallory", Roles: []string{"writer"}, Scope: graph.Scope{TenantID: "t1"}}
)

// serve runs the HTTP API with the A2A endpoint and card mounted as
// `mnemo serve` mounts them, on a real store.
func serve(t *testing.T) string {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	eng, err := engine.New(engine.Options{Store: graphtest.Open(t), Policy: holder})
	require.NoError(t, err)
	srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{keyAlice: alice, keyMallory: mallory}})
	require.NoError(t, err)
	ag, err := mnemoa2a.New(mnemoa2a.Options{Engine: eng, Version: "test"})
	require.NoError(t, err)
	srv.Mount(mnemoa2a.Path, ag.Handler())
	srv.MountPublic("/.well-known/agent-card.json", ag.CardHandler())
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// bearer adds the API key to every call, as an agent's A2A client does
// with the card's bearer scheme.
type bearer struct {
	a2aclient.PassthroughInterceptor
	key string
}

func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, error) {
	req.Meta["Authorization"] = []string{"Bearer " + b.key}
	return ctx, nil
}

func client(t *testing.T, base, key string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), base)
	require.NoError(t, err)
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithInterceptors(bearer{key: key}))
	require.NoError(t, err)
	return c
}

// send sends text to skill (empty: the default, research) and waits for
// the task to end.
func send(t *testing.T, c *a2aclient.Client, skill, text string, data map[string]any) *a2a.Task {
	t.Helper()
	parts := []a2a.Part{a2a.TextPart{Text: text}}
	if data != nil {
		parts = append(parts, a2a.DataPart{Data: data})
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	if skill != "" {
		msg.Metadata = map[string]any{"skill": skill}
	}
	blocking := true
	res, err := c.SendMessage(t.Context(), &a2a.MessageSendParams{Message: msg, Config: &a2a.MessageSendConfig{Blocking: &blocking}})
	require.NoError(t, err)
	task, ok := res.(*a2a.Task)
	require.True(t, ok, "want a task, got %T", res)
	return task
}

// result is a completed task's data part, as JSON-decoded maps.
func result(t *testing.T, task *a2a.Task) map[string]any {
	t.Helper()
	require.Equal(t, a2a.TaskStateCompleted, task.Status.State, "task ended %s: %s", task.Status.State, statusText(task))
	require.Len(t, task.Artifacts, 1)
	for _, p := range task.Artifacts[0].Parts {
		if d, ok := p.(a2a.DataPart); ok {
			raw, err := json.Marshal(d.Data)
			require.NoError(t, err)
			var out map[string]any
			require.NoError(t, json.Unmarshal(raw, &out))
			return out
		}
	}
	t.Fatal("no data part in the artifact")
	return nil
}

func statusText(task *a2a.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range task.Status.Message.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func TestAgentCard(t *testing.T) {
	base := serve(t)
	resp, err := http.Get(base + "/.well-known/agent-card.json") // no key: the card is public
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var card a2a.AgentCard
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	assert.Equal(t, base+mnemoa2a.Path, card.URL)
	assert.Equal(t, mnemoa2a.ProtocolVersion, card.ProtocolVersion)
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	assert.Equal(t, []string{"remember", "recall", "research"}, skills)
	assert.Contains(t, card.SecuritySchemes, a2a.SecuritySchemeName("apiKey"))
	assert.True(t, card.Capabilities.Streaming)
}

func TestRememberRecallResearch(t *testing.T) {
	base := serve(t)
	c := client(t, base, keyAlice)

	stored := result(t, send(t, c, "remember", "We decided to move the staging database to Postgres 17 on db-2.internal.",
		map[string]any{"type": "decision", "title": "Staging database on Postgres 17"}))
	assert.Equal(t, "approved", stored["status"])
	memoryID, _ := stored["memory_id"].(string)
	require.NotEmpty(t, memoryID)
	result(t, send(t, c, "remember", "Lunch on Fridays is tacos at the corner place.", nil))

	recalled := result(t, send(t, c, "recall", "staging database Postgres", map[string]any{"top_k": 5.0}))
	results, _ := recalled["results"].([]any)
	require.NotEmpty(t, results, "recall found nothing: %v", recalled)
	first := results[0].(map[string]any)
	assert.Equal(t, memoryID, first["citation"].(map[string]any)["element_id"])
	assert.NotContains(t, recalled, "dates", "the query names no date")
	dated := result(t, send(t, c, "recall", "staging database Postgres since 2026-01-01", nil))
	assert.Equal(t, []any{map[string]any{"from": "2026-01-01T00:00:00Z"}}, dated["dates"], "the span the query named, as read")

	// research plans types and time from the question, and cites every claim.
	task := send(t, c, "", "What did we decide about the staging database this week?", nil)
	out := result(t, task)
	assert.Equal(t, false, out["partial"])
	plan := out["plan"].(map[string]any)
	assert.Equal(t, []any{"decision"}, plan["types"])
	assert.NotEmpty(t, plan["after"], "this week sets a time range")
	assert.NotEmpty(t, plan["before"])
	claims, _ := out["claims"].([]any)
	require.NotEmpty(t, claims)
	for _, cl := range claims {
		cit := cl.(map[string]any)["citation"].(map[string]any)
		assert.NotEmpty(t, cit["element_id"])
		assert.NotEmpty(t, cit["version_id"], "every claim is pinned to a version")
	}
	assert.Len(t, out["attempts"], 1, "the planned search answered: no retry")
	assert.Contains(t, statusText(task), "cited claims")

	// A writer's decision waits for a librarian, as over HTTP.
	queued := send(t, client(t, base, keyMallory), "remember", "We decided to freeze deploys on Fridays.", map[string]any{"type": "decision"})
	assert.Equal(t, "pending", result(t, queued)["status"])
	assert.Contains(t, statusText(queued), "queued for review")
}

// TestResearchPartial asks about something no memory holds: three attempts
// (planned, relaxed, keyword), then a completed task marked partial with a
// warning.
func TestResearchPartial(t *testing.T) {
	base := serve(t)
	c := client(t, base, keyAlice)
	result(t, send(t, c, "remember", "The deploy pipeline runs on Jenkins.", nil))
	task := send(t, c, "research", "Which quasar did the Zorblax telescope observe in 2019?", nil)
	out := result(t, task)
	assert.Equal(t, true, out["partial"])
	assert.Contains(t, out["warning"], "after 3 attempts")
	attempts, _ := out["attempts"].([]any)
	require.Len(t, attempts, 3)
	modes := []string{}
	for _, a := range attempts {
		modes = append(modes, a.(map[string]any)["mode"].(string))
	}
	assert.Equal(t, []string{"hybrid", "hybrid", "keyword"}, modes)
	assert.Contains(t, statusText(task), "partial")
}

func TestRejectedAndFailedInput(t *testing.T) {
	base := serve(t)
	c := client(t, base, keyAlice)
	tests := []struct {
		name, skill, text, want string
	}{
		{"unknown skill", "summon", "hello", `unknown skill "summon"`},
		{"no text", "remember", " ", "no text"},
		{"engine refuses", "recall", "x", ""}, // a one-letter query is fine for search: checked below
	}
	for _, tc := range tests[:2] {
		t.Run(tc.name, func(t *testing.T) {
			task := send(t, c, tc.skill, tc.text, nil)
			assert.Equal(t, a2a.TaskStateRejected, task.Status.State)
			assert.Contains(t, statusText(task), tc.want)
		})
	}
	t.Run("bad mode", func(t *testing.T) {
		task := send(t, c, "recall", "database", map[string]any{"mode": "telepathy"})
		assert.Equal(t, a2a.TaskStateRejected, task.Status.State, statusText(task))
		assert.Contains(t, statusText(task), "mode")
	})
}

// TestTasksBelongToTheirCaller: another key cannot read a task by its id,
// and no key at all is 401 before any JSON-RPC.
func TestTasksBelongToTheirCaller(t *testing.T) {
	base := serve(t)
	task := send(t, client(t, base, keyAlice), "remember", "Alice's private note about the offsite.", nil)
	got, err := client(t, base, keyAlice).GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
	require.NoError(t, err)
	assert.Equal(t, task.ID, got.ID)
	_, err = client(t, base, keyMallory).GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")

	resp, err := http.Post(base+mnemoa2a.Path, "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+string(task.ID)+`"}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestStream sends message/stream and reads the state machine as events:
// the task submitted, working, the artifact, completed (final).
func TestStream(t *testing.T) {
	base := serve(t)
	c := client(t, base, keyAlice)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "The release train leaves every second Tuesday."})
	msg.Metadata = map[string]any{"skill": "remember"}
	var states []a2a.TaskState
	artifacts := 0
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.MessageSendParams{Message: msg}) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			artifacts++
		}
	}
	assert.Equal(t, []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted}, states)
	assert.Equal(t, 1, artifacts)
}
