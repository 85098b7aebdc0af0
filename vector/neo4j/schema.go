package neo4j

import (
	"context"
	"fmt"
	"strings"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// schemaNames are the names of one label's constraint and indexes.
type schemaNames struct {
	id, tenant, vector string
}

func namesFor(label string) schemaNames {
	return schemaNames{id: label + "_id", tenant: label + "_tenant", vector: label + "_embedding"}
}

// onlineTimeout is how long Open waits for the vector index to come online
// (it populates from existing nodes first).
const onlineTimeoutSeconds = 300

// ensureSchema creates the constraint and the indexes when missing, waits
// for them, and refuses a vector index of other dimensions or similarity.
func (x *Index) ensureSchema(ctx context.Context) error {
	l := quote(x.cfg.Label)
	stmts := []string{
		fmt.Sprintf("CREATE CONSTRAINT %s IF NOT EXISTS FOR (n:%s) REQUIRE n.id IS UNIQUE", quote(x.names.id), l),
		fmt.Sprintf("CREATE INDEX %s IF NOT EXISTS FOR (n:%s) ON (n.tenant_id)", quote(x.names.tenant), l),
		// Dimensions are an int checked by Open; options take no parameters.
		fmt.Sprintf("CREATE VECTOR INDEX %s IF NOT EXISTS FOR (n:%s) ON (n.embedding) "+
			"OPTIONS {indexConfig: {`vector.dimensions`: %d, `vector.similarity_function`: 'cosine'}}",
			quote(x.names.vector), l, x.cfg.Dimensions),
	}
	for _, s := range stmts {
		if err := x.write(ctx, s, nil); err != nil {
			return fmt.Errorf("neo4j vector: schema: %w", err)
		}
	}
	recs, err := x.read(ctx, "SHOW INDEXES YIELD name, type, options WHERE name = $name RETURN type, options",
		map[string]any{"name": x.names.vector})
	if err != nil {
		return fmt.Errorf("neo4j vector: show index %s: %w", x.names.vector, err)
	}
	if len(recs) != 1 {
		return fmt.Errorf("%w: index %s missing after creation", ErrSchema, x.names.vector)
	}
	typ, _ := recs[0].Values[0].(string)
	opts, _ := recs[0].Values[1].(map[string]any)
	conf, _ := opts["indexConfig"].(map[string]any)
	dim, _ := conf["vector.dimensions"].(int64)
	sim, _ := conf["vector.similarity_function"].(string)
	if typ != "VECTOR" || dim != int64(x.cfg.Dimensions) || !strings.EqualFold(sim, "cosine") {
		return fmt.Errorf("%w: index %s is %s with %d dimensions and %q similarity, want VECTOR, %d, cosine",
			ErrSchema, x.names.vector, typ, dim, sim, x.cfg.Dimensions)
	}
	sess := x.session(ctx, neo4jdrv.AccessModeRead)
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, "CALL db.awaitIndexes($seconds)", map[string]any{"seconds": onlineTimeoutSeconds})
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("neo4j vector: wait for indexes: %w", err)
	}
	return nil
}
