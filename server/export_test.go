package server

// RoutesOf lists the method and path of every route s registered, in
// gin's form (/v1/edits/:id, /v1/memories\:batch), except those under a
// Mount: the OpenAPI document must describe each.
func RoutesOf(s *Server) [][2]string {
	var out [][2]string
	for _, r := range s.router.Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}
