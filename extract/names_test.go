package extract_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestNames holds the name finder's rules, one case each: what makes a
// capitalised word a name or not, and what types it.
func TestNames(t *testing.T) {
	x := extract.NewExtractor(defaultPolicy(t), extract.NewNER())
	tests := []struct {
		name string
		text string
		want []ent
	}{
		{"speaker label", "Caroline: I went to the support group yesterday", []ent{{"Caroline", "person"}}},
		{"common word at a sentence start", "Quarantine made me appreciate the outdoors.", []ent{}},
		{"core word at a sentence start though a given name", "Summer trip: cabins first.", []ent{}},
		{"line label is no speaker", "Idea: a weekly newsletter.", []ent{}},
		{"weekdays, months and holidays", "We meet on Fridays in March, except at Christmas.", []ent{}},
		{"demonym alone", "An English novelist and a Mexican painter.", []ent{}},
		{"demonym opening a name", "It was built with the European Space Agency.", []ent{{"European Space Agency", "org"}}},
		{"contraction", "We're looking at houses in Evanston.", []ent{{"Evanston", "place"}}},
		{"imperative before a name", "Ask Tom about the invoices.", []ent{{"Tom", "person"}}},
		{"kinship word as a name", "Call Mom about the flights.", []ent{{"Mom", "person"}}},
		{"honorific dropped", "Remember to call Dr. Patel tomorrow.", []ent{{"Patel", "person"}}},
		{"possessive dropped", "We went to Olivia's recital.", []ent{{"Olivia", "person"}}},
		{"initials", "A novel by J. R. R. Tolkien.", []ent{{"J. R. R. Tolkien", "person"}}},
		{"connectors", "She studied at the University of Paris.", []ent{{"University of Paris", "org"}}},
		{"leading article dropped", "The Beatles formed in Liverpool.", []ent{{"Beatles", "concept"}, {"Liverpool", "place"}}},
		{"place prefix at a start", "Lake Victoria feeds the river.", []ent{{"Lake Victoria", "place"}}},
		{"place suffix", "We walked along the Charles River.", []ent{{"Charles River", "place"}}},
		{"given name first", "Jane Austen wrote novels.", []ent{{"Jane Austen", "person"}}},
		{"person by the verb after", "Priya recommended the ramen place.", []ent{{"Priya", "person"}}},
		{"person by the word before", "My cousin Priya took the photos.", []ent{{"Priya", "person"}}},
		{"place by the preposition before", "We booked a cabin near Reykjavik.", []ent{{"Reykjavik", "place"}}},
		{"org by the preposition before", "I lost my job at Walmart.", []ent{{"Walmart", "org"}}},
		{"place then team", "He signed with the Minnesota Timberwolves.", []ent{{"Minnesota Timberwolves", "org"}}},
		{"acronym", "It was built by NASA.", []ent{{"NASA", "org"}}},
		{"technical acronyms are no names", "The API returns JSON over HTTP.", []ent{}},
		{"all-caps common words are no names", "Run VACUUM ANALYZE after a bulk load.", []ent{}},
		{"tool by technical context", "Redis keeps the session cache.", []ent{{"Redis", "tool"}}},
		{"other proper name", "I watched Inception again.", []ent{{"Inception", "concept"}}},
		{"lone camel case is code", "A Deployment manages a ReplicaSet.", []ent{{"Deployment", "tool"}, {"ReplicaSet", "code"}}},
		{"camel case inside a name", "It stars Leonardo DiCaprio.", []ent{{"Leonardo DiCaprio", "person"}}},
		{"gazetteer first", "Kubernetes runs in Berlin.", []ent{{"Kubernetes", "tool"}, {"Berlin", "place"}}},
		{"heading words", "# Getting Started With Docker", []ent{{"Docker", "tool"}}},
		{"title-case text is split at common words", "Notes On The Long Walk From Lisbon To Porto Along The Old Coast Road",
			[]ent{{"Lisbon", "place"}, {"Porto", "place"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := x.Entities(tt.text)
			assert.Equal(t, tt.want, mentions(got))
			for _, m := range got {
				assert.Equal(t, m.Name, tt.text[m.Start:m.End], "offsets of %q", m.Name)
			}
		})
	}
}

// FuzzEntities holds that any text, however broken, yields mentions whose
// offsets lie inside it and whose name is the text there (or the
// gazetteer's name), and that extraction is deterministic.
func FuzzEntities(f *testing.F) {
	for _, s := range []string{"Caroline: I went to Boston.", "J. R. R. Tolkien", "Dr. ", "St. Mark's", "’s", "A\n# B C\n", "Tesla, Inc. and D.C."} {
		f.Add(s)
	}
	x := extract.NewExtractor(defaultPolicy(f), extract.NewNER())
	f.Fuzz(func(t *testing.T, text string) {
		got := x.Entities(text)
		for _, m := range got {
			if m.Start < 0 || m.End > len(text) || m.Start > m.End {
				t.Fatalf("mention %q at [%d,%d) outside a text of %d bytes", m.Name, m.Start, m.End, len(text))
			}
			if m.Source == extract.SourceNER && text[m.Start:m.End] != m.Name {
				t.Fatalf("name %q is not the text at its offsets, %q", m.Name, text[m.Start:m.End])
			}
			if len(m.Name) > extract.MaxNameLen || len(m.NormName) > extract.MaxNameLen {
				t.Fatalf("name of %d bytes, more than the store takes", len(m.Name))
			}
		}
		assert.Equal(t, got, x.Entities(text))
	})
}

// TestEntityNamesFitTheStore holds that no mention is longer than the
// store takes: a long URL or a long run of capitalised words used to make
// the store refuse the whole memory.
func TestEntityNamesFitTheStore(t *testing.T) {
	require.Equal(t, graph.MaxNameLen, extract.MaxNameLen)
	x := extract.NewExtractor(defaultPolicy(t), extract.NewNER())
	long := "https://example.com/" + strings.Repeat("a", 300)
	caps := strings.Repeat("Alpha Beta Gamma Delta ", 20)
	for _, text := range []string{"see " + long + " now", caps, "We met " + caps} {
		for _, m := range x.Entities(text) {
			assert.LessOrEqual(t, len(m.Name), graph.MaxNameLen, m.Name)
			assert.NotEqual(t, "url", m.Type)
		}
	}
}
