package neo4j_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
)

// TestAnalystQueries runs every Cypher block of docs/analysts.md against a
// graph written by the store (memories of one session, a new version, a
// supersession, entities mentioned together, a queued write, an approved
// edit) and fails on a query that errors or returns no row: the ready
// queries analysts paste into Neo4j Browser stay true to the model.
func TestAnalystQueries(t *testing.T) {
	cfg := neo4jtest.Config(t)
	s := neo4jtest.Open(t, cfg)
	ctx := t.Context()
	sc := graph.Scope{TenantID: "acme"}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	caroline := graph.EntityRef{Name: "Caroline", Type: "person"}
	bob := graph.EntityRef{Name: "Bob", Type: "person"}
	memory := func(title, content string, i int, ents ...graph.EntityRef) graph.MemoryInput {
		return graph.MemoryInput{
			Memory: graph.Memory{Scope: sc, Type: "note", Title: title, Visibility: graph.VisibilityProject,
				SessionID: "s1", CreatedAt: at.Add(time.Duration(i) * time.Minute)},
			Version: graph.VersionInput{Content: content, Entities: ents},
		}
	}
	create := func(in graph.MemoryInput) (graph.Created, error) {
		out, err := s.CreateMemories(ctx, []graph.MemoryInput{in})
		if err != nil {
			return graph.Created{}, err
		}
		return out[0], nil
	}
	first, err := create(memory("Caroline meets Bob", "Caroline met Bob at the support group.", 0, caroline, bob))
	must(t, err)
	_, err = create(memory("Caroline paints", "Caroline painted a sunrise.", 1, caroline))
	must(t, err)
	_, err = s.AddVersion(ctx, sc, first.Memory.ID, graph.VersionInput{Content: "Caroline met Bob at the LGBTQ support group.", Entities: []graph.EntityRef{caroline, bob}})
	must(t, err)
	about := func(action string) graph.AuditEvent {
		return graph.AuditEvent{Scope: sc, Action: action, SubjectKind: "Memory", SubjectID: first.Memory.ID, ActorID: "lib", CreatedAt: at}
	}
	e, err := s.CreateEdit(ctx, graph.Edit{Scope: sc, Kind: graph.EditAmend, TargetMemoryID: first.Memory.ID, Content: "Caroline met Bob.",
		Reason: "shorter", CreatedBy: "lib", CreatedAt: at}, about("edit.propose"))
	must(t, err)
	_, err = s.DecideEdit(ctx, sc, e.ID, graph.EditApproved, "lib", at, about("edit.approve"))
	must(t, err)
	newer := memory("Caroline meets Bob (corrected)", "Caroline met Bob at the support group in May.", 2, caroline, bob)
	newer.Supersedes = first.Memory.ID
	_, err = create(newer)
	must(t, err)
	_, err = s.CreateGateRequest(ctx, graph.GateRequest{Scope: sc, Title: "A policy memory", Rule: "policy-needs-review",
		Payload: []byte(`{}`), RequestedBy: "agent-7", CreatedAt: at},
		graph.AuditEvent{Scope: sc, Action: "gate.queue", SubjectKind: "GateRequest", ActorID: "gate"})
	must(t, err)

	doc, err := os.ReadFile("../../docs/analysts.md")
	must(t, err)
	blocks := regexp.MustCompile("(?s)### ([^\n]+)\n.*?```cypher\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 8 {
		t.Fatalf("docs/analysts.md: %d cypher blocks under ### headings, want the 8 or more documented", len(blocks))
	}
	driver, err := neo4jdrv.NewDriverWithContext(cfg.URI, neo4jdrv.NoAuth())
	must(t, err)
	defer driver.Close(context.Background())
	params := map[string]any{"tenant": "acme", "memory_id": first.Memory.ID, "entity": "caroline"}
	for _, b := range blocks {
		t.Run(b[1], func(t *testing.T) {
			res, err := neo4jdrv.ExecuteQuery(ctx, driver, b[2], params, neo4jdrv.EagerResultTransformer)
			if err != nil {
				t.Fatalf("%s\n%s", err, b[2])
			}
			if len(res.Records) == 0 {
				t.Fatalf("no rows:\n%s", b[2])
			}
		})
	}
}

// TestBrowserServed checks the Neo4j Browser that `make neo4j` (and CI)
// serve beside the test database: the page, and the discovery document
// that points it at the Bolt port NEO4J_URI names.
func TestBrowserServed(t *testing.T) {
	base := os.Getenv("NEO4J_BROWSER_URL")
	if base == "" {
		if os.Getenv("MNEMO_REQUIRE_NEO4J") == "1" {
			t.Fatal("NEO4J_BROWSER_URL is not set: `make test` starts the Browser with NEO4J_BROWSER_PORT and sets it")
		}
		t.Skip("NEO4J_BROWSER_URL is not set (start testdata/neo4j with NEO4J_BROWSER_PORT=7474 and set NEO4J_BROWSER_URL=http://127.0.0.1:7474)")
	}
	get := func(path, accept string) string {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		must(t, err)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must(t, err)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(body)
	}
	if page := get("/browser/", "text/html"); !strings.Contains(page, "<title>Neo4j Browser</title>") {
		t.Fatalf("GET /browser/: not the Browser page: %.200s", page)
	}
	u, err := url.Parse(os.Getenv("NEO4J_URI"))
	must(t, err)
	if d := get("/", "application/json"); !strings.Contains(d, `"bolt_direct":"bolt://127.0.0.1:`+u.Port()+`"`) {
		t.Fatalf("discovery does not point at NEO4J_URI's port %s: %s", u.Port(), d)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
