package extract

import "testing"

// BenchmarkReadLexicon is the one-off cost of reading the name finder's
// word lists, paid by the first NewNER of a process.
func BenchmarkReadLexicon(b *testing.B) {
	for b.Loop() {
		_ = readLexicon()
	}
}
