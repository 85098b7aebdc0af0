// Package policy holds the YAML policy that policy authors edit: the memory
// type catalog with its index and display rules, layers and classification
// rules, entity types and gazetteer, SAQ canonical-key vocabulary, gate rules,
// roles and permissions, and retrieval knobs.
//
// On the write path the extractor reads the classification rules, the
// gazetteer and the SAQ vocabulary, and the engine asks Gate for every durable
// write. On the read path the engine reads the retrieval knobs and the display
// rules, and the server asks Allows for every request.
//
// Parse decodes strictly (unknown fields are errors) and validates the whole
// document, reporting every problem with the file name, line and field path
// as an Errors list of *Error. A Holder keeps the running policy and swaps it
// atomically on Reload, keeping the old one when the new one is invalid.
package policy
