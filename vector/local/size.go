package local

import (
	"context"

	"github.com/mnemo-dev/mnemo/vector"
)

// Size implements vector.Sizer: the live points, read without waiting for a
// write in progress to finish (unlike Stats).
func (x *Index) Size(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil {
		return 0, vector.ErrClosed
	}
	return x.st.nLive, nil
}

var _ vector.Sizer = (*Index)(nil)
