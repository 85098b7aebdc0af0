package neo4j

import (
	"context"

	"github.com/mnemo-dev/mnemo/vector"
)

// Size implements vector.Sizer: the point nodes across every tenant (from
// Neo4j's count store, without a scan).
func (x *Index) Size(ctx context.Context) (int, error) {
	if err := x.begin(ctx); err != nil {
		return 0, err
	}
	recs, err := x.read(ctx, x.q.size, nil)
	if err != nil {
		return 0, x.fail(ctx, err, "size")
	}
	n, _ := recs[0].Values[0].(int64)
	return int(n), nil
}

var _ vector.Sizer = (*Index)(nil)
