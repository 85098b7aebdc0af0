package policy

import (
	"regexp"
	"strings"
)

// Policy is one parsed and validated policy document. A Policy is immutable
// after Parse returns it and safe for concurrent use.
type Policy struct {
	// Version is the schema version; only 1 exists.
	Version int `yaml:"version"`
	// Types is the memory type catalog keyed by type name (note, task, ...).
	Types map[string]TypeDef `yaml:"types"`
	// Layers lists the layers (Self, World, Intent) and their sublayers.
	Layers []Layer `yaml:"layers"`
	// Classify holds the classification rules and the fallback target.
	Classify Classify `yaml:"classify"`
	// Entities holds the entity types and the gazetteer.
	Entities Entities `yaml:"entities"`
	// SAQ holds the canonical-key vocabulary.
	SAQ SAQ `yaml:"saq"`
	// WriteGate holds the write gate rules (YAML key gate).
	WriteGate Gate `yaml:"gate"`
	// Roles maps a role name to its permissions; "*" grants every
	// permission except the operator one, policy_reload.
	Roles map[string][]string `yaml:"roles"`
	// Retrieval holds the search knobs.
	Retrieval Retrieval `yaml:"retrieval"`
	// Edits holds the memory-surgery rules per edit op (see EditRule).
	Edits map[string]EditRule `yaml:"edits"`

	name   string
	digest string
}

// Name is the file name the policy was parsed from.
func (p *Policy) Name() string { return p.name }

// Digest names the document the policy was parsed from: the first 8 bytes
// of its SHA-256, in hex. Two processes run the same policy when their
// digests are equal (engine.FollowPolicy).
func (p *Policy) Digest() string { return p.digest }

// Type returns the definition of the named memory type.
func (p *Policy) Type(name string) (TypeDef, bool) {
	t, ok := p.Types[name]
	return t, ok
}

// HasSublayer reports whether layer exists and, when sublayer is not empty,
// whether it is one of the layer's sublayers.
func (p *Policy) HasSublayer(layer, sublayer string) bool {
	for _, l := range p.Layers {
		if l.Name != layer {
			continue
		}
		if sublayer == "" {
			return true
		}
		for _, s := range l.Sublayers {
			if s == sublayer {
				return true
			}
		}
		return false
	}
	return false
}

// Fields a type's index_text and display rules may name.
const (
	FieldTitle   = "title"
	FieldContent = "content"
	FieldSummary = "summary"
	FieldStatus  = "status"
	FieldDue     = "due"
	FieldTags    = "tags"
)

var knownFields = []string{FieldTitle, FieldContent, FieldSummary, FieldStatus, FieldDue, FieldTags}

// TypeDef is one memory type of the catalog.
type TypeDef struct {
	// Description says what the type is for.
	Description string `yaml:"description"`
	// IndexText lists the parts of the text that is indexed (entities,
	// keyword, vector). Parts are joined with a newline and empty parts are
	// skipped; a part "summary|content" takes the first non-empty field.
	IndexText []string `yaml:"index_text"`
	// Statuses is the allowed status values; empty means the type has none.
	Statuses []string `yaml:"statuses"`
	// DefaultStatus is the status a new memory gets; must be in Statuses.
	DefaultStatus string `yaml:"default_status"`
	// Due says whether a due date is none (the default), optional or required.
	Due string `yaml:"due"`
	// Display says how a memory of this type is shown in results.
	Display Display `yaml:"display"`
	// Dedupe says whether items of this type dedupe and supersede by
	// canonical key (default true). Off for a type whose items all stand on
	// their own even when they say the same thing, such as conversation
	// turns (episodes): every item is a new memory, and no key is derived
	// unless the caller gives one.
	Dedupe *bool `yaml:"dedupe"`
}

// Dedupes reports whether items of the type dedupe by canonical key.
func (t TypeDef) Dedupes() bool { return t.Dedupe == nil || *t.Dedupe }

// IndexTextOf builds the index text from a memory's fields, per IndexText.
func (t TypeDef) IndexTextOf(fields map[string]string) string {
	parts := make([]string, 0, len(t.IndexText))
	for _, part := range t.IndexText {
		for _, alt := range strings.Split(part, "|") {
			if v := strings.TrimSpace(fields[alt]); v != "" {
				parts = append(parts, v)
				break
			}
		}
	}
	return strings.Join(parts, "\n")
}

// Neighbour display modes.
const (
	NeighbourFull    = "full"
	NeighbourSummary = "summary"
	NeighbourID      = "id"
)

// Display is a type's display rule.
type Display struct {
	// Primary is the field shown as the body of a result.
	Primary string `yaml:"primary"`
	// PrimaryTrim trims the primary field to this many characters; 0 keeps
	// it whole.
	PrimaryTrim int `yaml:"primary_trim"`
	// Appendix lists fields shown after the body (e.g. status, due).
	Appendix []string `yaml:"appendix"`
	// AppendixTrim trims each appendix field; 0 keeps them whole.
	AppendixTrim int `yaml:"appendix_trim"`
	// Neighbour is how the memory is shown when appended as a neighbour:
	// full, summary (summary + id) or id. Empty means summary.
	Neighbour string `yaml:"neighbour"`
}

// Layer is one top-level layer and its sublayers.
type Layer struct {
	Name      string   `yaml:"name"`
	Sublayers []string `yaml:"sublayers"`
}

// Target is what a classification yields.
type Target struct {
	Type     string `yaml:"type"`
	Layer    string `yaml:"layer"`
	Sublayer string `yaml:"sublayer"`
}

// Classify holds the classification rules, tried in order, and the target
// used when none matches.
type Classify struct {
	Default Target      `yaml:"default"`
	Rules   []ClassRule `yaml:"rules"`
}

// ClassRule maps textual cues to a type, layer and sublayer.
type ClassRule struct {
	// Name identifies the rule in classifications and audit.
	Name string `yaml:"name"`
	// WhenType restricts the rule to memories whose caller-given type is one
	// of these; empty means any.
	WhenType []string `yaml:"when_type"`
	// Keywords are words or phrases matched case-insensitively on word
	// boundaries; any one matching fires the rule.
	Keywords []string `yaml:"keywords"`
	// Regex is an RE2 expression; a match fires the rule.
	Regex string `yaml:"regex"`
	// Target is the classification the rule yields. An empty Type keeps the
	// caller's type (or the default type).
	Target `yaml:",inline"`

	kw *regexp.Regexp
	re *regexp.Regexp
}

// Matches reports whether the rule's keywords or regex match text. It does
// not check WhenType.
func (r *ClassRule) Matches(text string) bool {
	if r.kw != nil && r.kw.MatchString(text) {
		return true
	}
	return r.re != nil && r.re.MatchString(text)
}

// AppliesTo reports whether the rule may fire for a caller-given type.
func (r *ClassRule) AppliesTo(typ string) bool {
	if len(r.WhenType) == 0 {
		return true
	}
	for _, t := range r.WhenType {
		if t == typ {
			return true
		}
	}
	return false
}

// Entities holds the entity types and the gazetteer.
type Entities struct {
	// Types is the entity type vocabulary.
	Types []string `yaml:"types"`
	// Gazetteer lists known entities the extractor must recognise.
	Gazetteer []GazetteerEntry `yaml:"gazetteer"`
}

// GazetteerEntry is one known entity with its aliases.
type GazetteerEntry struct {
	Name    string   `yaml:"name"`
	Type    string   `yaml:"type"`
	Aliases []string `yaml:"aliases"`
}

// SAQ is the canonical-key vocabulary: {Subject}-{Aspect}-{Qualifier}.
type SAQ struct {
	// MaxLength caps the key length; at most 30.
	MaxLength int `yaml:"max_length"`
	// BannedWords never appear as a key part (matched case-insensitively).
	BannedWords []string `yaml:"banned_words"`
	// SelfWords mark a first-person statement; its subject is SelfSubject.
	SelfWords []string `yaml:"self_words"`
	// SelfSubject is the subject of first-person statements (e.g. Self).
	SelfSubject string `yaml:"self_subject"`
	// Imperatives are verbs that, opening a statement, make it an
	// instruction; its subject is ImperativeSubject.
	Imperatives []string `yaml:"imperatives"`
	// ImperativeSubject is the subject of instructions (e.g. Dev).
	ImperativeSubject string `yaml:"imperative_subject"`
	// Verbs end the subject noun phrase of a third-person statement.
	Verbs []string `yaml:"verbs"`
	// Negations mark a negated statement (not, never, avoid, ...).
	Negations []string `yaml:"negations"`
	// Stopwords never count as subject or qualifier words.
	Stopwords []string `yaml:"stopwords"`
	// Generic words are dropped from qualifiers (ide, setting, value, ...).
	Generic []string `yaml:"generic"`
	// Synonyms map a word to its canonical form before anything else.
	Synonyms map[string]string `yaml:"synonyms"`
	// Antonyms replace a negated qualifier word (relative -> absolute).
	Antonyms map[string]string `yaml:"antonyms"`
	// Aspects are tried in order; the first with a cue in the text wins.
	Aspects []Aspect `yaml:"aspects"`
	// Fallback parts used when a part cannot be derived.
	Fallback Fallback `yaml:"fallback"`
}

// Aspect is one aspect of the vocabulary and the words that cue it.
type Aspect struct {
	// Name is the aspect key part (PascalCase, e.g. Pref, Config).
	Name string `yaml:"name"`
	// Cues are the words (after synonyms) that select this aspect.
	Cues []string `yaml:"cues"`
	// Qualifiers fix the qualifier for some cues (listen -> Binding).
	Qualifiers map[string]string `yaml:"qualifiers"`
}

// Fallback holds the key parts used when none can be derived.
type Fallback struct {
	Subject   string `yaml:"subject"`
	Aspect    string `yaml:"aspect"`
	Qualifier string `yaml:"qualifier"`
}

// Gate actions.
const (
	ActionApprove = "approve"
	ActionQueue   = "queue"
	ActionReject  = "reject"
)

// Gate holds the write gate: rules tried in order (first match wins) and the
// action taken when none matches.
type Gate struct {
	Default string     `yaml:"default"`
	Rules   []GateRule `yaml:"rules"`
}

// GateRule is one gate rule. Every non-empty criterion must hold; within a
// list criterion any listed value matches.
type GateRule struct {
	// Name is recorded with every decision the rule makes.
	Name string `yaml:"name"`
	// Match holds the criteria.
	Match GateMatch `yaml:"match"`
	// Action is approve, queue or reject.
	Action string `yaml:"action"`
	// Reason is a human explanation recorded with the decision.
	Reason string `yaml:"reason"`
}

// GateMatch holds a gate rule's criteria.
type GateMatch struct {
	Types       []string `yaml:"types"`
	Layers      []string `yaml:"layers"`
	Sublayers   []string `yaml:"sublayers"`
	SourceKinds []string `yaml:"source_kinds"`
	// Roles matches when the principal holds any of these roles.
	Roles []string `yaml:"roles"`
	// Metadata matches when every key has the given value; the value "*"
	// only requires the key to be present.
	Metadata map[string]string `yaml:"metadata"`
}

// Permissions a role may grant. PermAll grants every permission except the
// operator ones (operatorPerms), which a role must list by name.
const (
	PermRead            = "read"
	PermWrite           = "write"
	PermApprove         = "approve"
	PermCurate          = "curate"
	PermSurgery         = "surgery"
	PermReadQuarantined = "read_quarantined"
	// PermReadAllUsers reads every user's private (visibility user or
	// session) memories, not only the principal's own.
	PermReadAllUsers = "read_all_users"
	// PermActAsUser writes, or supersedes, under a user other than the
	// principal's own.
	PermActAsUser = "act_as_user"
	// PermSubscopes reads and writes in scopes beneath the principal's (a
	// tenant-wide key reaching its orgs and repos).
	PermSubscopes = "subscopes"
	// PermErase erases memories for good (graph/forget.go): any user's in
	// the principal's reach, and whole users. Without it a principal with
	// write erases only its own user's memories.
	PermErase = "erase"
	// PermPropose proposes a change to a memory (a new version pinned to
	// the one it was written against) and rebases proposals: the curation
	// loop's only write an execution agent has.
	PermPropose = "propose"
	// PermPromote publishes a repository's baseline (POST
	// /v1/baselines:promote), which changes what read_context returns by
	// default.
	PermPromote = "promote"
	// PermPolicyReload replaces the process-wide policy for every tenant:
	// an operator permission that PermAll does not grant.
	PermPolicyReload = "policy_reload"
	PermAll          = "*"
)

var knownPerms = []string{PermRead, PermWrite, PermApprove, PermCurate, PermSurgery, PermReadQuarantined,
	PermReadAllUsers, PermActAsUser, PermSubscopes, PermPolicyReload, PermAuditRead, PermErase, PermPropose, PermPromote,
	PermAll}

// operatorPerms act on the whole process, beyond any tenant: PermAll does
// not grant them.
var operatorPerms = []string{PermPolicyReload}

// Retrieval modes.
const (
	ModeGraph   = "graph"
	ModeVector  = "vector"
	ModeKeyword = "keyword"
	ModeHybrid  = "hybrid"
)

// Fusion methods.
const (
	// FusionRRF is weighted reciprocal rank fusion: w / (k + rank).
	FusionRRF = "rrf"
	// FusionScore is a weighted sum of each signal's scores, min-max
	// normalised within the query.
	FusionScore = "score"
	// FusionZScore is a weighted sum of each signal's scores as z-scores
	// (distance from the signal's mean in standard deviations) within the
	// query; a signal that did not find a memory adds 0 for it.
	FusionZScore = "zscore"
)

// Reranker kinds.
const (
	RerankerRRF          = "rrf"
	RerankerMMR          = "mmr"
	RerankerNodeDistance = "node_distance"
)

// Retrieval holds the search knobs. Parse fills documented defaults for
// zero values.
type Retrieval struct {
	// Mode is graph (default), vector, keyword or hybrid.
	Mode string `yaml:"mode"`
	// Rerank turns the rerank stage on; default true.
	Rerank *bool `yaml:"rerank"`
	// Reranker picks the rerank method.
	Reranker Reranker `yaml:"reranker"`
	// Fusion is how the signals combine: rrf (default), score or zscore.
	Fusion string `yaml:"fusion"`
	// RRFK is the reciprocal-rank-fusion constant; default 60.
	RRFK int `yaml:"rrf_k"`
	// FusionWeights weigh the signals (graph, vector, keyword, and time:
	// a candidate dated within a calendar date the query names) in fusion;
	// a missing signal weighs 1.
	FusionWeights map[string]float64 `yaml:"fusion_weights"`
	// ExpansionHops was the depth of the graph signal's expansion, 0 or 1.
	// It is accepted so that older policies still load, and ignored: the
	// graph signal is a walk whose depth the store bounds (docs/search.md).
	ExpansionHops *int `yaml:"expansion_hops"`
	// Neighbours caps the neighbours appended per result.
	Neighbours Neighbours `yaml:"neighbours"`
	// TokenBudget caps the tokens of a context bundle; 0 means no cap.
	TokenBudget int `yaml:"token_budget"`
	// Relevance calibrates a result's absolute relevance to the query,
	// what its confidence starts from and what abstention compares.
	Relevance Relevance `yaml:"relevance"`
	// AbstentionThreshold is the relevance under which search abstains: when
	// no result's relevance reaches it, search returns none. In [0,1];
	// default 0 (never abstain).
	AbstentionThreshold float64 `yaml:"abstention_threshold"`
}

// Relevance maps what the query and a memory share to a relevance in
// [0,1] that means the same for every query: the cosine similarity of
// their embeddings, plus CoverageWeight times the share of the query's
// keyword terms the memory contains (coverage, in [0,1]), through a
// logistic:
//
//	relevance = 1 / (1 + exp(-(cosine + CoverageWeight·coverage - CosineMid) / CosineWidth))
//
// so relevance is 0.5 where cosine + CoverageWeight·coverage = CosineMid
// and moves from 0.12 to 0.88 over CosineMid ± 2·CosineWidth. The values
// depend on the embedding model: the defaults are calibrated for
// bge-small-en-v1.5 (docs/search.md, `mnemo bench abstain`).
type Relevance struct {
	// CosineMid is where relevance is 0.5, in (-1,2); default
	// DefaultCosineMid.
	CosineMid float64 `yaml:"cosine_mid"`
	// CosineWidth is the logistic's scale, in (0,1]; default
	// DefaultCosineWidth.
	CosineWidth float64 `yaml:"cosine_width"`
	// CoverageWeight is what a memory holding every keyword term of the
	// query adds to its cosine, in [0,1]; default DefaultCoverageWeight
	// (nil). 0 turns coverage off.
	CoverageWeight *float64 `yaml:"coverage_weight"`
}

// Coverage returns the coverage weight in force.
func (r Relevance) Coverage() float64 {
	if r.CoverageWeight == nil {
		return DefaultCoverageWeight
	}
	return *r.CoverageWeight
}

// Relevance calibration defaults, for bge-small-en-v1.5 (docs/search.md).
const (
	DefaultCosineMid      = 0.65
	DefaultCosineWidth    = 0.02
	DefaultCoverageWeight = 0.05
)

// RerankEnabled reports whether the rerank stage runs.
func (r Retrieval) RerankEnabled() bool { return r.Rerank == nil || *r.Rerank }

// Hops returns the expansion depth.
func (r Retrieval) Hops() int {
	if r.ExpansionHops == nil {
		return 1
	}
	return *r.ExpansionHops
}

// Reranker picks a rerank method and its parameter.
type Reranker struct {
	// Kind is rrf (default), mmr or node_distance.
	Kind string `yaml:"kind"`
	// Lambda is MMR's relevance/diversity trade-off in [0,1]; default 0.7.
	Lambda float64 `yaml:"lambda"`
}

// Neighbours caps neighbour append per result.
type Neighbours struct {
	// NotesLimit caps neighbours shown in full; 0 shows none.
	NotesLimit int `yaml:"notes_limit"`
	// DocsLimit caps neighbours shown as summary + id; 0 shows none.
	DocsLimit int `yaml:"docs_limit"`
	// RelationsLimit caps the memories appended per result because an
	// explicit relation links them to it (docs/curation.md, "Relations"),
	// shown by their type's display.neighbour rule, first and beside the
	// notes and docs limits; 0 shows none.
	RelationsLimit int `yaml:"relations_limit"`
}

// fusionSignals are the signals FusionWeights may weigh.
var fusionSignals = []string{"graph", "vector", "keyword", "time"}
