package storetest

import (
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// The fixture graph every discovery case runs on: seven memories of one
// tenant, their MENTIONS edges to five entities, and the attributes the
// filter cases select on. Created times are base + minute, so newest first
// is m7, m6, ..., m1.
//
//	entity (type)         aliases           m1  m2  m3  m4  m5  m6  m7
//	go (language)                           ●       ●                   ●
//	postgres (database)   pg, PostgreSQL    ●   ●       ●               ●
//	redis (database)                                    ●
//	kubernetes (tool)     k8s                       ●       ●
//	alice (person)                                              ●
//
//	      m1 ──go── m3 ──kubernetes── m5 ── alice
//	      │ ╲        │
//	postgres go      go           m6 (no entities)
//	      │    ╲     │
//	      m2    ╲── m7 (go + postgres: shares two with m1)
//	      │
//	      m4 ── redis          (m2, m4, m7 all mention postgres)
//
//	     minute type      user tags         visibility  other
//	m1   0      note      u1   backend      user
//	m2   1      doc       u2   db           project     project p1
//	m3   2      note      u1   backend,ops  user        index text "kubernetes deployment rollout"
//	m4   3      note      u1   backend,db   project     project p1
//	m5   4      decision  u2   ops          global      subject team/platform
//	m6   5      note      u2   -            session     session s1, content only
//	m7   6      note      u1   backend      user
//
// Known answers, used by the cases:
//
//	Candidates(postgres)        m7 m4 m2 m1
//	Candidates(Go, PG)          m7 m1 (two matched), then m4 m3 m2
//	Candidates(K8S)             m5 m3
//	Neighbours(m1)              m7 (two shared), then m3 (go: 3 mentions)
//	                            before m4 m2 (postgres: 4 mentions)
//	Neighbours(m1, m3)          m1: m7 m4 m2; m3: m5 (kubernetes: 2) m7
type fixture struct {
	scope graph.Scope
	ids   map[string]string // fixture name (m1..m7) -> memory id
}

// id returns the memory ids of fixture names, in order.
func (fx fixture) id(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fx.ids[n]
	}
	return out
}

// name maps memory ids back to fixture names, for readable failures.
func (fx fixture) names(ids []string) []string {
	rev := make(map[string]string, len(fx.ids))
	for n, id := range fx.ids {
		rev[id] = n
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		if n, ok := rev[id]; ok {
			out[i] = n
		} else {
			out[i] = id
		}
	}
	return out
}

func ent(name, typ string, aliases ...string) graph.EntityRef {
	return graph.EntityRef{Name: name, Type: typ, Aliases: aliases}
}

// buildFixture writes the fixture graph drawn above into scope s.
func (x *suite) buildFixture(t *testing.T, s graph.Scope) fixture {
	t.Helper()
	var (
		goLang   = ent("Go", "language")
		postgres = ent("Postgres", "database", "pg", "PostgreSQL")
		redis    = ent("Redis", "database")
		k8s      = ent("Kubernetes", "tool", "k8s")
		alice    = ent("Alice", "person")
	)
	rows := []struct {
		name, typ, user, title, content, index string
		tags                                   []string
		vis                                    graph.Visibility
		ents                                   []graph.EntityRef
		edit                                   func(m *graph.Memory)
	}{
		{"m1", "note", "u1", "Go service talks to Postgres", "the api service is written in go and stores rows in postgres", "",
			[]string{"backend"}, graph.VisibilityUser, []graph.EntityRef{goLang, postgres}, nil},
		{"m2", "doc", "u2", "Postgres tuning guide", "raise shared buffers and work mem", "",
			[]string{"db"}, graph.VisibilityProject, []graph.EntityRef{postgres}, func(m *graph.Memory) { m.ProjectID = "p1" }},
		{"m3", "note", "u1", "Deploying Go on Kubernetes", "helm chart secret sauce", "kubernetes deployment rollout",
			[]string{"backend", "ops"}, graph.VisibilityUser, []graph.EntityRef{goLang, k8s}, nil},
		{"m4", "note", "u1", "Redis cache in front of Postgres", "a redis cache absorbs read traffic", "",
			[]string{"backend", "db"}, graph.VisibilityProject, []graph.EntityRef{redis, postgres}, func(m *graph.Memory) { m.ProjectID = "p1" }},
		{"m5", "decision", "u2", "Alice owns Kubernetes", "alice is the platform owner", "",
			[]string{"ops"}, graph.VisibilityGlobal, []graph.EntityRef{alice, k8s}, func(m *graph.Memory) { m.SubjectType, m.SubjectID = "team", "platform" }},
		{"m6", "note", "u2", "Lunch menu", "tacos on friday", "",
			nil, graph.VisibilitySession, nil, func(m *graph.Memory) { m.SessionID = "s1" }},
		{"m7", "note", "u1", "Go and Postgres migrations", "schema migrations run from a go binary", "",
			[]string{"backend"}, graph.VisibilityUser, []graph.EntityRef{goLang, postgres}, nil},
	}
	fx := fixture{scope: s, ids: map[string]string{}}
	for i, r := range rows {
		in := graph.MemoryInput{
			Memory: graph.Memory{Scope: s, Type: r.typ, UserID: r.user, Title: r.title, Tags: r.tags,
				Visibility: r.vis, CreatedAt: base.Add(time.Duration(i) * time.Minute)},
			Version: graph.VersionInput{Content: r.content, IndexText: r.index, Entities: r.ents},
		}
		if r.edit != nil {
			r.edit(&in.Memory)
		}
		fx.ids[r.name] = x.create(t, in).Memory.ID
	}
	return fx
}
