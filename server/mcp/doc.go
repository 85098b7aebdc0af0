// Package mcp is mnemo's Model Context Protocol face: the engine's use
// cases (remember, recall, get, list, read_context, verify_citations and
// the librarian's review of queued writes) as MCP tools with typed input
// and output schemas, served on stdio (`mnemo mcp`) or over streamable HTTP
// at /mcp on `mnemo serve`.
//
// Like the HTTP handlers in package server, the tools translate to engine
// calls and back and hold no state; a tool's error reads exactly as the
// HTTP API's error message for the same failure (server.Describe). The
// caller is a graph.Principal: on stdio the one the API key in
// MNEMO_API_KEY names, over HTTP the one server.Mount authenticated and put
// in the request's context (server.PrincipalFrom).
package mcp
