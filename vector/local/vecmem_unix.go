//go:build unix

package local

import (
	"syscall"
	"unsafe"
)

// allocVecs returns room for n float32s outside the Go heap (an anonymous
// mapping, zeroed), and the mapping to hand to freeVecs; with no mapping
// (mmap refused) it falls back to the heap and returns nil. Outside the
// heap, the vectors — most of the index's memory, 1.44 GB at 1M points of
// 384 dimensions — are neither scanned by the collector nor counted in the
// heap it lets grow to twice the live data (GOGC), which held RSS at 1M
// near twice the data (docs/benchmarks.md, "1M memories").
func allocVecs(n int) ([]float32, []byte) {
	m, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]float32, 0, n), nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(m))), n)[:0], m
}

// freeVecs returns a mapping allocVecs made. Nothing may read its vectors
// after.
func freeVecs(m []byte) {
	if m != nil {
		_ = syscall.Munmap(m)
	}
}
