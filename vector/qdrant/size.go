package qdrant

import (
	"context"

	qd "github.com/qdrant/go-client/qdrant"

	"github.com/mnemo-dev/mnemo/vector"
)

// Size implements vector.Sizer: the collection's points, an approximate
// count (cheap on a large collection; metrics need no more).
func (x *Index) Size(ctx context.Context) (int, error) {
	if err := x.begin(ctx); err != nil {
		return 0, err
	}
	n, err := x.client.Count(ctx, &qd.CountPoints{CollectionName: x.cfg.Collection, Exact: qd.PtrOf(false)})
	if err != nil {
		return 0, x.fail(ctx, err, "qdrant count")
	}
	return int(n), nil
}

var _ vector.Sizer = (*Index)(nil)
