package neo4j

import (
	"strings"
	"testing"
)

// TestSchemaNames: ensureSchema skips a statement whose index or constraint
// exists by the name schemaName reads, so every CREATE and DROP of schema()
// must yield its name, and no two creates may share one.
func TestSchemaNames(t *testing.T) {
	seen := map[string]bool{}
	for _, stmt := range schema() {
		name, create, ok := schemaName(stmt)
		isSchema := strings.HasPrefix(stmt, "CREATE ") || strings.HasPrefix(stmt, "DROP ")
		if ok != isSchema {
			t.Errorf("schemaName(%q): ok %v, want %v", stmt, ok, isSchema)
			continue
		}
		if !ok {
			continue
		}
		if name == "" || !strings.Contains(stmt, " "+name+" ") {
			t.Errorf("schemaName(%q) = %q: not the statement's name", stmt, name)
		}
		if create {
			if seen[name] {
				t.Errorf("two statements create %q", name)
			}
			seen[name] = true
		}
	}
	if len(seen) < 30 {
		t.Errorf("%d names read from schema(), want every index and constraint", len(seen))
	}
}
