package extract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/extract"
)

type ent struct{ name, typ string }

func mentions(ms []extract.Mention) []ent {
	out := make([]ent, 0, len(ms))
	for _, m := range ms {
		out = append(out, ent{m.Name, m.Type})
	}
	return out
}

func TestEntitiesGazetteerAndPatterns(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), nil)
	tests := []struct {
		name string
		text string
		want []ent
	}{
		{"alias resolves to gazetteer name", "We run k8s on bare metal", []ent{{"Kubernetes", "tool"}}},
		{"one entity per concept", "Kubernetes, aka K8s or kube", []ent{{"Kubernetes", "tool"}}},
		{"multi-word alias", "Open it in VS Code", []ent{{"Visual Studio Code", "tool"}}},
		{"short name is case-sensitive", "let's go to Go", []ent{{"Go", "language"}}},
		{"lower-case verb is not the language", "go home", []ent{}},
		{"postgres alias", "Postgres 16 and psql", []ent{{"PostgreSQL", "tool"}}},
		{"version", "Upgrade to v1.2.3 then 2.0.1", []ent{{"v1.2.3", "version"}, {"2.0.1", "version"}}},
		{"ip is not a version", "listens on 0.0.0.0", []ent{}},
		{"url", "see https://example.com/docs?x=1.", []ent{{"https://example.com/docs?x=1", "url"}}},
		{"handle and tag", "ping @ada_l about #release-2", []ent{{"@ada_l", "handle"}, {"#release-2", "tag"}}},
		{"heading is not a tag", "# Title", []ent{}},
		{"path and file", "edit ./cmd/mnemo/main.go and go.mod", []ent{{"./cmd/mnemo/main.go", "path"}, {"go.mod", "path"}}},
		{"snake and camel", "call parse_policy then loadConfig", []ent{{"parse_policy", "code"}, {"loadConfig", "code"}}},
		{"pkg.Func", "use policy.Parse and extract.ChunkMarkdown", []ent{{"policy.Parse", "code"}, {"extract.ChunkMarkdown", "code"}}},
		{"pascal compound", "the HolderReload test", []ent{{"HolderReload", "code"}}},
		{"gazetteer beats code pattern", "TypeScript and JavaScript", []ent{{"TypeScript", "language"}, {"JavaScript", "language"}}},
		{"empty", "", []ent{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := x.Entities(tt.text)
			assert.Equal(t, tt.want, mentions(got))
			for _, m := range got {
				assert.Equal(t, extract.NormName(m.Name) != "", m.NormName != "")
				if m.Start >= 0 {
					assert.LessOrEqual(t, m.End, len(tt.text))
				}
			}
		})
	}
}

func TestEntitiesAliasesRecorded(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), nil)
	got := x.Entities("k8s and Kubernetes")
	require.Len(t, got, 1)
	assert.Equal(t, "kubernetes", got[0].NormName)
	assert.Contains(t, got[0].Aliases, "K8s")
	assert.Equal(t, "k8s", "k8s and Kubernetes"[got[0].Start:got[0].End])
}

func TestEntitiesNER(t *testing.T) {
	ner := extract.NewNER()
	x := extract.NewExtractor(defaultPolicy(t), ner)
	got := x.Entities("Ada Lovelace met Charles Babbage in London to discuss Kubernetes.")
	names := map[string]string{}
	for _, m := range got {
		names[m.Name] = m.Type
	}
	t.Logf("NER mentions: %+v", mentions(got))
	assert.Equal(t, "tool", names["Kubernetes"], "gazetteer still wins")
	assert.Equal(t, "person", names["Ada Lovelace"])
	// Same input, same output: NER must be deterministic for ingest.
	assert.Equal(t, got, x.Entities("Ada Lovelace met Charles Babbage in London to discuss Kubernetes."))
}

func TestExtract(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), nil)
	r := x.Extract("I think I really prefer dark mode in VS Code", extract.Hint{})
	assert.Equal(t, "I prefer dark mode in VS Code", r.Normalized)
	assert.Equal(t, "preference", r.Classification.Rule)
	assert.Equal(t, "Self-Pref-DarkMode", r.Key)
	assert.Equal(t, []ent{{"Visual Studio Code", "tool"}}, mentions(r.Entities))
}

func TestEntitiesNERLimit(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), extract.NewNER())
	const person = "Ada Lovelace met Charles Babbage in London."
	filler := strings.Repeat("the cache keeps recent results for ten minutes ", extract.NERLimit/40)
	tests := []struct {
		name     string
		text     string
		nerBytes int
		want     bool // Ada Lovelace found by NER
	}{
		{"inside the limit", person + " " + filler, extract.NERLimit, true},
		{"past the limit", filler + person, extract.NERLimit, false},
		{"no NER", person, 0, false},
		{"cut at a word boundary", person, len("Ada Lovelace met Charles Babbage in Lon"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := false
			for _, m := range x.EntitiesNER(tt.text, tt.nerBytes) {
				found = found || m.Name == "Ada Lovelace"
				assert.NotEqual(t, "Lon", m.Name)
			}
			assert.Equal(t, tt.want, found)
		})
	}
}

// TestEntitiesManyPatternMatches holds the fix for the quadratic overlap
// test: every match is still found once, whatever the count.
func TestEntitiesManyPatternMatches(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), nil)
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "see a%d/b and v1.%d.0 with @u%d, ", i, i, i)
	}
	got := x.Entities(b.String())
	count := map[string]int{}
	for _, m := range got {
		count[m.Type]++
	}
	assert.Equal(t, map[string]int{"path": 3000, "version": 3000, "handle": 3000}, count)
}

func TestFoldName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Aschenbrödel", "Aschenbrodel"},
		{"Grünberg", "Grunberg"},
		{"Société Générale", "Societe Generale"},
		{"Kassel", "Kassel"},
		{"", ""},
		{"Łódź", "Łodz"}, // Ł is a letter of its own, not L with a mark
	} {
		assert.Equal(t, c.want, extract.FoldName(c.in), c.in)
	}
}

// TestEntitiesFoldedAlias: a name with diacritics keeps them, and its
// folded form is an alias, so a query without the accents links to it.
func TestEntitiesFoldedAlias(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), extract.NewNER())
	var found bool
	for _, m := range x.Entities("The opera Aschenbrödel was staged in Vienna by Johann Strauss.") {
		if m.Name == "Aschenbrödel" {
			found = true
			assert.Contains(t, m.Aliases, "Aschenbrodel")
		}
		if m.Name == "Vienna" {
			assert.NotContains(t, m.Aliases, "Vienna", "an ASCII name is its own fold")
		}
	}
	require.True(t, found, "the name finder finds Aschenbrödel")
}
