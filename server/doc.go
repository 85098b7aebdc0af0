// Package server is mnemo's HTTP face: the Gin router, API-key
// authentication (key -> graph.Principal), strict JSON decoding, and the
// mapping of engine errors to {"error":{"code","message","field"}} with the
// right status. Handlers translate HTTP to engine calls and back; they hold
// no state and pass the request's context on.
package server
