package vector

import "context"

// Sizer is an optional Index capability: the number of points across every
// tenant, for operators' metrics. Callers check for it with a type
// assertion. vector/local and vector/qdrant implement it.
type Sizer interface {
	Size(ctx context.Context) (int, error)
}
