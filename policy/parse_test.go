package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/policy"
)

// minimal is the smallest valid policy; tests mutate it line by line, so
// keep line numbers in mind when editing (they appear in wanted errors).
const minimal = `version: 1
types:
  note:
    index_text: [content]
    display: {primary: content}
  task:
    index_text: [title, "summary|content"]
    statuses: [todo, done]
    default_status: todo
    due: optional
    display: {primary: title, appendix: [status, due]}
layers:
  - name: World
    sublayers: [Fact, Rule]
  - name: Self
    sublayers: [Preference]
classify:
  default: {type: note, layer: World, sublayer: Fact}
  rules:
    - name: pref
      keywords: [i prefer]
      layer: Self
      sublayer: Preference
entities:
  types: [tool, person]
  gazetteer:
    - {name: Kubernetes, type: tool, aliases: [K8s]}
saq:
  self_subject: Self
  imperative_subject: Dev
  fallback: {subject: Note, aspect: Fact, qualifier: General}
roles:
  reader: [read]
  writer: [read, write]
  admin: ["*"]
gate:
  default: queue
  rules:
    - name: admin-approves
      match: {roles: [admin]}
      action: approve
    - name: no-rules
      match: {sublayers: [Rule]}
      action: reject
retrieval:
  mode: graph
`

func TestParseMinimal(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, "policy.yaml", p.Name())
	assert.Equal(t, 30, p.SAQ.MaxLength, "max_length default")
	assert.Equal(t, 60, p.Retrieval.RRFK, "rrf_k default")
	assert.Equal(t, policy.RerankerRRF, p.Retrieval.Reranker.Kind)
	assert.Equal(t, 1, p.Retrieval.Hops())
	assert.True(t, p.Retrieval.RerankEnabled())
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // replace old with new in minimal
		want     string // the whole first error line
	}{
		{
			name: "unknown gate action",
			old:  "      action: reject\n", new: "      action: aprove\n",
			want: `policy.yaml:44: gate.rules[1].action: unknown action "aprove" (want approve|queue|reject)`,
		},
		{
			name: "unknown field is refused",
			old:  "      action: reject\n", new: "      action: reject\n      acton: approve\n",
			want: `policy.yaml:45: field acton not found in type GateRule`,
		},
		{
			name: "unknown top-level field",
			old:  "version: 1\n", new: "version: 1\nretreival: {}\n",
			want: `policy.yaml:2: field retreival not found in type Policy`,
		},
		{
			// yaml.v3 reports a parser error at its context line, counted
			// from 0: the flow sequence opens on line 46.
			name: "syntax error",
			old:  "  mode: graph\n", new: "  mode: [graph\n",
			want: `policy.yaml:45: did not find expected ',' or ']'`,
		},
		{
			name: "wrong scalar type",
			old:  "version: 1\n", new: "version: one\n",
			want: "policy.yaml:1: cannot unmarshal !!str `one` into int",
		},
		{
			name: "bad version",
			old:  "version: 1\n", new: "version: 2\n",
			want: `policy.yaml:1: version: unsupported version 2 (want 1)`,
		},
		{
			name: "index text field",
			old:  `index_text: [title, "summary|content"]`, new: `index_text: [title, "sumary|content"]`,
			want: `policy.yaml:7: types.task.index_text[1]: unknown field "sumary" (want title|content|summary|status|due|tags)`,
		},
		{
			name: "default status not a status",
			old:  "default_status: todo", new: "default_status: open",
			want: `policy.yaml:9: types.task.default_status: default status "open" is not one of statuses`,
		},
		{
			name: "unknown sublayer in classify",
			old:  "      sublayer: Preference\n", new: "      sublayer: Preferences\n",
			want: `policy.yaml:23: classify.rules[0].sublayer: layer "Self" has no sublayer "Preferences"`,
		},
		{
			name: "bad regex",
			old:  "      keywords: [i prefer]\n", new: "      regex: '(unclosed'\n",
			want: "policy.yaml:21: classify.rules[0].regex: bad regex: error parsing regexp: missing closing ): `(unclosed`",
		},
		{
			name: "rule without cues",
			old:  "      keywords: [i prefer]\n", new: "",
			want: `policy.yaml:20: classify.rules[0]: rule needs keywords or regex`,
		},
		{
			name: "default type unknown",
			old:  "default: {type: note,", new: "default: {type: memo,",
			want: `policy.yaml:18: classify.default.type: unknown memory type "memo"`,
		},
		{
			name: "gazetteer type unknown",
			old:  "type: tool, aliases", new: "type: tools, aliases",
			want: `policy.yaml:27: entities.gazetteer[0].type: unknown entity type "tools"`,
		},
		{
			name: "gazetteer alias clash",
			old:  "aliases: [K8s]}\n", new: "aliases: [K8s]}\n    - {name: k8s, type: tool}\n",
			want: `policy.yaml:28: entities.gazetteer[1].name: "k8s" is already used by gazetteer[0]`,
		},
		{
			name: "saq max length",
			old:  "saq:\n", new: "saq:\n  max_length: 40\n",
			want: `policy.yaml:29: saq.max_length: must be between 8 and 30, got 40`,
		},
		{
			name: "saq part not pascal",
			old:  "self_subject: Self", new: "self_subject: self",
			want: `policy.yaml:29: saq.self_subject: key part "self" must be PascalCase`,
		},
		{
			name: "unknown permission",
			old:  "writer: [read, write]", new: "writer: [read, wrte]",
			want: `policy.yaml:34: roles.writer[1]: unknown permission "wrte" (want read|write|approve|curate|surgery|read_quarantined|read_all_users|act_as_user|subscopes|policy_reload|audit_read|erase|propose|promote|*)`,
		},
		{
			name: "gate role unknown",
			old:  "roles: [admin]", new: "roles: [root]",
			want: `policy.yaml:40: gate.rules[0].match.roles[0]: unknown role "root"`,
		},
		{
			name: "gate rule unnamed",
			old:  "    - name: admin-approves\n", new: "    - name: \"\"\n",
			want: `policy.yaml:39: gate.rules[0].name: rule name is required`,
		},
		{
			name: "gate default",
			old:  "default: queue", new: "default: allow",
			want: `policy.yaml:37: gate.default: unknown action "allow" (want approve|queue|reject)`,
		},
		{
			name: "retrieval mode",
			old:  "mode: graph", new: "mode: graf",
			want: `policy.yaml:46: retrieval.mode: unknown mode "graf" (want graph|vector|keyword|hybrid)`,
		},
		{
			name: "expansion hops",
			old:  "mode: graph\n", new: "mode: graph\n  expansion_hops: 2\n",
			want: `policy.yaml:47: retrieval.expansion_hops: must be 0 or 1, got 2`,
		},
		{
			name: "mmr lambda",
			old:  "mode: graph\n", new: "mode: graph\n  reranker: {kind: mmr, lambda: 1.5}\n",
			want: `policy.yaml:47: retrieval.reranker.lambda: must be in [0,1], got 1.5`,
		},
		{
			name: "relevance cosine width",
			old:  "mode: graph\n", new: "mode: graph\n  relevance: {cosine_mid: 0.6, cosine_width: -0.1}\n",
			want: `policy.yaml:47: retrieval.relevance.cosine_width: must be in (0,1], got -0.1`,
		},
		{
			name: "relevance cosine mid",
			old:  "mode: graph\n", new: "mode: graph\n  relevance: {cosine_mid: 2}\n",
			want: `policy.yaml:47: retrieval.relevance.cosine_mid: must be in (-1,2), got 2`,
		},
		{
			name: "relevance coverage weight",
			old:  "mode: graph\n", new: "mode: graph\n  relevance: {coverage_weight: -0.2}\n",
			want: `policy.yaml:47: retrieval.relevance.coverage_weight: must be in [0,1], got -0.2`,
		},
		{
			name: "fusion signal",
			old:  "mode: graph\n", new: "mode: graph\n  fusion_weights: {graph: 1, bm25: 0.5}\n",
			want: `policy.yaml:47: retrieval.fusion_weights.bm25: unknown signal "bm25" (want graph|vector|keyword|time)`,
		},
		{
			name: "edit op unknown",
			old:  "mode: graph\n", new: "mode: graph\nedits:\n  erase: {propose: [admin]}\n",
			want: `policy.yaml:48: edits.erase: unknown edit op "erase" (want retract|amend|quarantine|attenuate|block)`,
		},
		{
			name: "edit role unknown",
			old:  "mode: graph\n", new: "mode: graph\nedits:\n  retract: {propose: [root]}\n",
			want: `policy.yaml:48: edits.retract.propose[0]: unknown role "root"`,
		},
		{
			name: "edit auto-approved by a role that may not approve",
			old:  "mode: graph\n", new: "mode: graph\nedits:\n  amend: {propose: [admin], approve: [], auto_approve: [admin]}\n",
			want: `policy.yaml:48: edits.amend.auto_approve[0]: role "admin" auto-approves but may not approve (add it to approve)`,
		},
		{
			name: "empty document",
			old:  minimal, new: "# nothing\n",
			want: `policy.yaml:1: empty policy document`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, minimal, tt.old, "test case does not apply")
			doc := strings.Replace(minimal, tt.old, tt.new, 1)
			p, err := policy.Parse("policy.yaml", []byte(doc))
			require.Error(t, err)
			assert.Nil(t, p)
			assert.ErrorIs(t, err, policy.ErrInvalid)
			var errs policy.Errors
			require.ErrorAs(t, err, &errs)
			require.NotEmpty(t, errs)
			assert.Equal(t, tt.want, errs[0].Error(), "all: %v", err)
		})
	}
}

func TestEditAllows(t *testing.T) {
	doc := strings.Replace(minimal, "mode: graph\n", "mode: graph\nedits:\n"+
		"  amend: {propose: [\"*\"], approve: [admin], auto_approve: [admin]}\n", 1)
	p, err := policy.Parse("policy.yaml", []byte(doc))
	require.NoError(t, err)
	tests := []struct {
		op, stage string
		roles     []string
		want      bool
	}{
		{policy.EditAmend, policy.EditStagePropose, []string{"reader"}, true},
		{policy.EditAmend, policy.EditStagePropose, nil, false},
		{policy.EditAmend, policy.EditStageApprove, []string{"writer"}, false},
		{policy.EditAmend, policy.EditStageApprove, []string{"writer", "admin"}, true},
		{policy.EditAmend, policy.EditStageAutoApprove, []string{"admin"}, true},
		{policy.EditRetract, policy.EditStagePropose, []string{"admin"}, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, p.EditAllows(tc.op, tc.stage, tc.roles), "%s %s %v", tc.op, tc.stage, tc.roles)
	}
}

func TestParseReportsEveryError(t *testing.T) {
	doc := strings.Replace(minimal, "mode: graph", "mode: graf", 1)
	doc = strings.Replace(doc, "default: queue", "default: allow", 1)
	_, err := policy.Parse("p.yaml", []byte(doc))
	var errs policy.Errors
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs, 2)
	assert.Equal(t, "gate.default", errs[0].Field)
	assert.Equal(t, 37, errs[0].Line)
	assert.Equal(t, "retrieval.mode", errs[1].Field)
	var one *policy.Error
	require.ErrorAs(t, err, &one)
	assert.Equal(t, "p.yaml", one.File)
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "team.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(minimal, "mode: graph", "mode: graf", 1)), 0o600))
	_, err := policy.LoadFile(path)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "team.yaml:46: "), err.Error())

	_, err = policy.LoadFile(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.False(t, errors.Is(err, policy.ErrInvalid))
}

func TestParseTooLarge(t *testing.T) {
	_, err := policy.Parse("big.yaml", make([]byte, policy.MaxSize+1))
	require.ErrorIs(t, err, policy.ErrInvalid)
}

func TestIndexTextOf(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte(minimal))
	require.NoError(t, err)
	task, ok := p.Type("task")
	require.True(t, ok)
	tests := []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"title and summary", map[string]string{"title": "Ship", "summary": "ship v2", "content": "long"}, "Ship\nship v2"},
		{"summary empty falls back", map[string]string{"title": "Ship", "summary": " ", "content": "long"}, "Ship\nlong"},
		{"no title", map[string]string{"content": "long"}, "long"},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, task.IndexTextOf(tt.fields))
		})
	}
}
