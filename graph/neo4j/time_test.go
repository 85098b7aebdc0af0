package neo4j

import (
	"strings"
	"testing"
	"time"
)

// TestAsKnownRewritesEveryFragment: a read with KnownAt reads no property
// that holds today's state (status, quarantined, blocked_channels, the
// current version), so a change to memoryVisible or memoryProjection that
// the rewrite no longer matches fails here instead of reading today.
func TestAsKnownRewritesEveryFragment(t *testing.T) {
	known := map[string]any{"f_known_at": time.Now()}
	for _, c := range []struct {
		name, text string
		gone       []string
	}{
		{"memoryVisible", memoryVisible, []string{"m.status IN $f_statuses", "m.blocked_channels", "m.quarantined"}},
		{"memoryProjection", memoryProjection, []string{".status,", ".current_version_id", ".version_count"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := asKnown(c.text, known)
			for _, g := range c.gone {
				if strings.Contains(got, g) {
					t.Errorf("as known, %s still reads %q:\n%s", c.name, g, got)
				}
			}
			if !strings.Contains(got, "$f_known_at") {
				t.Errorf("as known, %s does not read $f_known_at", c.name)
			}
			if asKnown(c.text, map[string]any{"f_known_at": nil}) != c.text {
				t.Errorf("without KnownAt, %s is rewritten", c.name)
			}
		})
	}
}
