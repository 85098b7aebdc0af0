//go:build !unix

package local

// allocVecs returns room for n float32s on the heap (no mapping on this
// platform).
func allocVecs(n int) ([]float32, []byte) { return make([]float32, 0, n), nil }

// freeVecs has nothing to free here.
func freeVecs([]byte) {}
