package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

func TestShape(t *testing.T) {
	task := policy.TypeDef{Display: policy.Display{Primary: "title", Appendix: []string{"status", "due", "content"}, AppendixTrim: 5}}
	m := graph.Memory{Title: "Ship it", Tags: []string{"status:todo", "due:2025-07-01"}}
	primary, appendix := shape(task, true, m, graph.Version{}, "release the thing")
	assert.Equal(t, "Ship it", primary)
	assert.Equal(t, map[string]string{"status": "todo", "due": "2025-07-01", "content": "relea…"}, appendix)

	doc := policy.TypeDef{Display: policy.Display{Primary: "summary", PrimaryTrim: 4}}
	primary, _ = shape(doc, true, m, graph.Version{Summary: "abcdefgh"}, "body")
	assert.Equal(t, "abcd…", primary)
	primary, _ = shape(doc, true, m, graph.Version{}, "body")
	assert.Equal(t, "body", primary, "summary falls back to content")

	primary, appendix = shape(policy.TypeDef{}, false, m, graph.Version{}, "raw")
	assert.Equal(t, "raw", primary)
	assert.Nil(t, appendix)
}

func TestRepositoryID(t *testing.T) {
	assert.Equal(t, "r", repositoryID(graph.Scope{TenantID: "t", OrgID: "o", RepoID: "r"}))
	assert.Equal(t, "t/o", repositoryID(graph.Scope{TenantID: "t", OrgID: "o"}))
	assert.Equal(t, "t", repositoryID(graph.Scope{TenantID: "t"}))
}

func TestApplyBudget(t *testing.T) {
	r := func(id, content string, ns ...Neighbour) SearchResult {
		return SearchResult{Memory: graph.Memory{ID: id}, Content: content, Neighbours: ns}
	}
	rs := []SearchResult{
		r("a", "12345678"), // 2 tokens
		r("b", "1234567890123456789012345678901234567890"),      // 10 tokens
		r("c", "1234", Neighbour{ID: "n", Content: "12345678"}), // 1 + (1 + 2)
	}
	got, b := applyBudget(rs, 6)
	assert.Equal(t, []string{"a", "c"}, []string{got[0].Memory.ID, got[1].Memory.ID})
	assert.Equal(t, Budget{TokenBudget: 6, TokensUsed: 6, TokenBudgetExceeded: true, ExcludedCount: 1}, b)

	got, b = applyBudget(rs, 0)
	assert.Len(t, got, 3)
	assert.False(t, b.TokenBudgetExceeded)
	assert.Equal(t, 16, b.TokensUsed)
}
