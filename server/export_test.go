package server

import "strings"

// RoutesOf lists the method and path of every route s registered, in
// gin's form (/v1/edits/:id, /v1/memories\:batch), except those under a
// Mount (MCP speaks its own protocol): the OpenAPI document must describe
// each.
func RoutesOf(s *Server) [][2]string {
	var out [][2]string
	for _, r := range s.router.Routes() {
		if !mounted(s.mounts, r.Path) {
			out = append(out, [2]string{r.Method, r.Path})
		}
	}
	return out
}

func mounted(mounts []string, path string) bool {
	for _, m := range mounts {
		if path == m || strings.HasPrefix(path, m+"/") {
			return true
		}
	}
	return false
}
