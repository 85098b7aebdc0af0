package sqlite

// WalkCacheLists is how many posting lists the walk cache holds: tests
// check that a prefetch filled it.
func WalkCacheLists(s *Store) int {
	s.walks.mu.Lock()
	defer s.walks.mu.Unlock()
	return len(s.walks.m)
}
