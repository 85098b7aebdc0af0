package engine

import (
	"sync"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/policy"
)

// extractors caches the write path's extractor for the running policy. The
// NER model is loaded once per engine; the extractor (gazetteer index, SAQ
// vocabulary) is rebuilt when the policy is reloaded. It is a cache: safe to
// lose, never the only copy of anything. The zero value is ready to use.
type extractors struct {
	nerOnce sync.Once
	ner     *extract.NER

	mu  sync.Mutex
	pol *policy.Policy
	x   *extract.Extractor
}

// get returns the extractor for p, building it when p is not the policy
// it was last built for.
func (c *extractors) get(p *policy.Policy) *extract.Extractor {
	c.nerOnce.Do(func() { c.ner = extract.NewNER() })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pol != p {
		c.pol, c.x = p, extract.NewExtractor(p, c.ner)
	}
	return c.x
}
