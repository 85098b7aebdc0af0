// Package extract holds the deterministic text steps of the write path:
// Normalize drops conversational fluff, Classify picks a memory type, layer
// and sublayer from the policy's rules, an Extractor finds entities (policy
// gazetteer, code/version/path/URL/handle/tag patterns, and names found by
// capitalisation, a dictionary, word lists and cue words), a Resolver maps
// mentions onto known entities, Key builds the SAQ canonical key
// {Subject}-{Aspect}-{Qualifier}, and ChunkMarkdown splits a document into
// sections addressed by heading path and byte offsets.
//
// Everything here is a pure function of its input and the policy: the same
// text under the same policy always yields the same result.
package extract
