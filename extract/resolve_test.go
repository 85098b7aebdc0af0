package extract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/extract"
)

func TestNormName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  PostgreSQL ", "postgresql"},
		{"Node.js", "node js"},
		{"node-js", "node js"},
		{"VS  Code", "vs code"},
		{"C++", "c++"},
		{"C#", "c#"},
		{"K8s", "k8s"},
		{"O'Reilly", "o reilly"},
		{"Zürich", "zürich"},
		{"...", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, extract.NormName(tt.in), tt.in)
	}
}

// TestResolvePairs resolves a mention against one known entity: same says
// whether they are one real-world thing.
func TestResolvePairs(t *testing.T) {
	type ent struct {
		name, typ string
		aliases   []string
	}
	tests := []struct {
		known   ent
		mention ent
		same    bool
	}{
		// Same thing.
		{ent{"PostgreSQL", "tool", nil}, ent{"postgresql", "tool", nil}, true},
		{ent{"PostgreSQL", "tool", nil}, ent{"Postgre SQL", "tool", nil}, true},
		{ent{"PostgreSQL", "tool", []string{"Postgres"}}, ent{"postgres", "", nil}, true},
		{ent{"Kubernetes", "tool", []string{"K8s"}}, ent{"k8s", "tool", nil}, true},
		{ent{"K8s", "tool", nil}, ent{"K8S", "tool", nil}, true},
		{ent{"DB", "concept", nil}, ent{"db", "concept", nil}, true},
		{ent{"Neo4j", "tool", nil}, ent{"neo4j", "tool", nil}, true},
		{ent{"Visual Studio Code", "tool", []string{"VS Code"}}, ent{"vs-code", "tool", nil}, true},
		{ent{"John Smith", "person", nil}, ent{"john  smith", "person", nil}, true},
		{ent{"Elasticsearch", "tool", nil}, ent{"Elastic Search", "tool", nil}, true},
		{ent{"Kubernetes", "tool", nil}, ent{"Kubernets", "tool", nil}, true},
		{ent{"Node.js", "tool", nil}, ent{"node js", "tool", nil}, true},
		{ent{"TypeScript", "language", nil}, ent{"Typescript", "language", nil}, true},
		{ent{"mnemo", "project", nil}, ent{"Mnemo", "", nil}, true},
		{ent{"Acme Corporation", "org", []string{"Acme Corp"}}, ent{"ACME corp.", "org", nil}, true},
		{ent{"GitHub", "org", nil}, ent{"Github", "org", nil}, true},
		{ent{"Elasticsearch", "tool", nil}, ent{"Elasticsearh", "tool", nil}, true}, // a dropped letter; transpositions (Mircosoft) stay apart
		{ent{"San Francisco", "place", nil}, ent{"SanFrancisco", "place", nil}, true},
		{ent{"Kubernetes", "tool", []string{"kube"}}, ent{"Kube", "tool", nil}, true},
		{ent{"Qdrant", "tool", nil}, ent{"qdrant", "", nil}, true},
		// Different things.
		{ent{"DB", "concept", nil}, ent{"DBA", "concept", nil}, false},
		{ent{"K8s", "tool", nil}, ent{"K9s", "tool", nil}, false},
		{ent{"Go", "language", nil}, ent{"Git", "tool", nil}, false},
		{ent{"JS", "language", nil}, ent{"TS", "language", nil}, false},
		{ent{"Java", "language", nil}, ent{"JavaScript", "language", nil}, false},
		{ent{"PostgreSQL", "tool", nil}, ent{"MySQL", "tool", nil}, false},
		{ent{"python2", "language", nil}, ent{"python3", "language", nil}, false},
		{ent{"v1.2.3", "version", nil}, ent{"v1.2.4", "version", nil}, false},
		{ent{"get_user", "code", nil}, ent{"get_users", "code", nil}, false},
		{ent{"Apple", "org", nil}, ent{"Apply", "org", nil}, false},
		{ent{"React", "tool", nil}, ent{"Preact", "tool", nil}, false},
		{ent{"John Smith", "person", nil}, ent{"Jane Smith", "person", nil}, false},
		{ent{"Redis", "tool", nil}, ent{"Redash", "tool", nil}, false},
		{ent{"Austin", "place", nil}, ent{"Boston", "place", nil}, false},
		{ent{"Kubernetes", "tool", nil}, ent{"Kubernetes Operator", "tool", nil}, false},
		{ent{"Jaguar", "org", nil}, ent{"Jaguar", "concept", nil}, true}, // exact name wins over type
		{ent{"Mercury Labs", "org", nil}, ent{"Mercury Lab", "place", nil}, false},
		{ent{"Elasticsearch", "tool", nil}, ent{"Elastic", "org", nil}, false},
		{ent{"config.Load", "code", nil}, ent{"config.Save", "code", nil}, false},
		{ent{"Neo4j", "tool", nil}, ent{"Neo3j", "tool", nil}, false},
	}
	var same, sameOK, diff, diffOK int
	for _, tt := range tests {
		r := extract.NewResolver([]extract.Known{{ID: "e1", Name: tt.known.name, NormName: extract.NormName(tt.known.name), Type: tt.known.typ, Aliases: tt.known.aliases}})
		got, how := r.Resolve(extract.Mention{Name: tt.mention.name, NormName: extract.NormName(tt.mention.name), Type: tt.mention.typ, Aliases: tt.mention.aliases})
		merged := how != extract.MatchNone
		if tt.same {
			same++
			if merged {
				sameOK++
				assert.Equal(t, "e1", got.ID)
			}
		} else {
			diff++
			if !merged {
				diffOK++
			}
		}
		assert.Equal(t, tt.same, merged, "%q vs %q (match %q)", tt.known.name, tt.mention.name, how)
	}
	t.Logf("resolver pairs=%d same=%d/%d different=%d/%d", len(tests), sameOK, same, diffOK, diff)
}

func TestResolveOrder(t *testing.T) {
	r := extract.NewResolver([]extract.Known{
		{ID: "pg", Name: "PostgreSQL", Type: "tool", Aliases: []string{"Postgres"}},
		{ID: "pgx", Name: "Postgres", Type: "tool"}, // an exact name beats another's alias
	})
	k, how := r.Resolve(extract.Mention{Name: "postgres"})
	assert.Equal(t, "pgx", k.ID)
	assert.Equal(t, extract.MatchExact, how)

	r.Add(extract.Known{ID: "es", Name: "Elasticsearch", Type: "tool"})
	k, how = r.Resolve(extract.Mention{Name: "Elastic-search", Type: "tool"})
	assert.Equal(t, "es", k.ID)
	assert.Equal(t, extract.MatchFuzzy, how)

	_, how = r.Resolve(extract.Mention{Name: "!!!"})
	assert.Equal(t, extract.MatchNone, how)
}
