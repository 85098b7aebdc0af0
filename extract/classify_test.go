package extract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/extract"
)

func TestClassify(t *testing.T) {
	p := defaultPolicy(t)
	tests := []struct {
		name string
		text string
		hint extract.Hint
		want extract.Classification
	}{
		{"unsure is world fact", "The sky is blue", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Fact", Rule: "default"}},
		{"empty text", "", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Fact", Rule: "default"}},
		{"preference", "I prefer dark mode IDEs", extract.Hint{}, extract.Classification{Type: "note", Layer: "Self", Sublayer: "Preference", Rule: "preference"}},
		{"preference case-insensitive", "i LIKE tabs", extract.Hint{}, extract.Classification{Type: "note", Layer: "Self", Sublayer: "Preference", Rule: "preference"}},
		{"keyword needs word boundary", "I preferably use vim", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Fact", Rule: "default"}},
		{"todo marker makes a task", "TODO: rotate the API keys", extract.Hint{}, extract.Classification{Type: "task", Layer: "Intent", Sublayer: "Task", Rule: "task-marker"}},
		{"checkbox makes a task", "- [ ] write the chunker", extract.Hint{}, extract.Classification{Type: "task", Layer: "Intent", Sublayer: "Task", Rule: "task-marker"}},
		{"decision", "We decided to use SQLite as the embedded store", extract.Hint{}, extract.Classification{Type: "decision", Layer: "Intent", Sublayer: "Decision", Rule: "decision"}},
		{"caller type wins", "We decided to use SQLite", extract.Hint{Type: "document"}, extract.Classification{Type: "document", Layer: "Intent", Sublayer: "Decision", Rule: "decision"}},
		{"unknown caller type ignored", "We decided to use SQLite", extract.Hint{Type: "memo"}, extract.Classification{Type: "decision", Layer: "Intent", Sublayer: "Decision", Rule: "decision"}},
		{"rule", "Do not use relative paths", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Rule", Rule: "rule"}},
		{"config", "The server listens on 0.0.0.0", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Config", Rule: "config"}},
		{"belief", "I believe the cache is stale", extract.Hint{}, extract.Classification{Type: "belief", Layer: "Self", Sublayer: "Belief", Rule: "belief"}},
		{"goal", "My goal is to ship v2 by June", extract.Hint{}, extract.Classification{Type: "note", Layer: "Intent", Sublayer: "Goal", Rule: "goal"}},
		{"identity", "My name is Ada", extract.Hint{}, extract.Classification{Type: "note", Layer: "Self", Sublayer: "Identity", Rule: "identity"}},
		{"procedure", "How to deploy: first run make", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Procedure", Rule: "procedure"}},
		{"event by date", "Deployed v1.2 on 2024-05-01", extract.Hint{}, extract.Classification{Type: "note", Layer: "World", Sublayer: "Event", Rule: "event"}},
		{"first rule wins", "TODO: I prefer to never use tabs", extract.Hint{}, extract.Classification{Type: "task", Layer: "Intent", Sublayer: "Task", Rule: "task-marker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, extract.Classify(p, tt.text, tt.hint))
		})
	}
}
