package sqlite

// WalkCacheLists is how many posting lists the walk cache holds: tests
// check that a prefetch filled it.
func WalkCacheLists(s *Store) int {
	p := s.walks.postings
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}
