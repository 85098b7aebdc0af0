package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxSize is the largest policy document Parse accepts, in bytes.
const MaxSize = 4 << 20

// LoadFile reads and parses the policy at path. Errors name the file by its
// base name.
func LoadFile(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

// Parse decodes and validates a policy document. name is used in error
// messages (usually the file name). A non-nil error is an Errors list whose
// entries are *Error.
func Parse(name string, data []byte) (p *Policy, err error) {
	if len(data) > MaxSize {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("document is %d bytes, larger than %d", len(data), MaxSize)}}
	}
	defer func() {
		// yaml.v3 has panicked on hostile input in the past; a policy file
		// must never take the process down.
		if r := recover(); r != nil {
			p, err = nil, Errors{{File: name, Msg: fmt.Sprintf("cannot decode: %v", r)}}
		}
	}()

	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Errors{yamlError(name, err.Error())}
	}
	if len(root.Content) == 0 {
		return nil, Errors{{File: name, Line: 1, Msg: "empty policy document"}}
	}

	sum := sha256.Sum256(data)
	p = &Policy{name: name, digest: hex.EncodeToString(sum[:8])}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			errs := make(Errors, 0, len(te.Errors))
			for _, msg := range te.Errors {
				errs = append(errs, yamlError(name, msg))
			}
			return nil, errs
		}
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: name, Line: 1, Msg: "empty policy document"}}
		}
		return nil, Errors{yamlError(name, err.Error())}
	}

	v := &validator{file: name, root: root.Content[0]}
	v.policy(p)
	if len(v.errs) > 0 {
		sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Line < v.errs[j].Line })
		return nil, v.errs
	}
	return p, nil
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// yamlError turns a yaml.v3 message ("yaml: line 3: ...") into an *Error.
func yamlError(file, msg string) *Error {
	msg = strings.TrimPrefix(msg, "yaml: ")
	e := &Error{File: file, Msg: msg}
	if m := lineRE.FindStringSubmatchIndex(msg); m != nil {
		e.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
		e.Msg = msg[:m[0]] + msg[m[1]:]
	}
	e.Msg = strings.ReplaceAll(e.Msg, "policy.", "")
	return e
}

// path is a field path: string keys and int indices.
type path []any

func (p path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, s)
		}
	}
	return b.String()
}

func (p path) with(s ...any) path {
	out := make(path, 0, len(p)+len(s))
	return append(append(out, p...), s...)
}

type validator struct {
	file string
	root *yaml.Node
	errs Errors
}

func (v *validator) add(at path, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.file, Line: v.line(at), Field: at.String(), Msg: fmt.Sprintf(format, args...)})
}

// line finds the line of the node at path, or of its nearest present
// ancestor.
func (v *validator) line(at path) int {
	n := v.root
	for _, seg := range at {
		next := child(n, seg)
		if next == nil {
			break
		}
		n = next
	}
	return n.Line
}

func child(n *yaml.Node, seg any) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch s := seg.(type) {
	case string:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == s {
				return n.Content[i+1]
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && s < len(n.Content) {
			return n.Content[s]
		}
	}
	return nil
}

var (
	typeNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	pascalRE   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (v *validator) oneOf(at path, what, got string, want []string) bool {
	if contains(want, got) {
		return true
	}
	v.add(at, "unknown %s %q (want %s)", what, got, strings.Join(want, "|"))
	return false
}

func (v *validator) policy(p *Policy) {
	if p.Version != 1 {
		v.add(path{"version"}, "unsupported version %d (want 1)", p.Version)
	}
	v.types(p)
	v.layers(p)
	v.classify(p)
	v.entities(p)
	v.saq(&p.SAQ)
	v.roles(p)
	v.gate(p)
	v.retrieval(&p.Retrieval)
	v.edits(p)
}

func (v *validator) types(p *Policy) {
	if len(p.Types) == 0 {
		v.add(path{"types"}, "at least one memory type is required")
	}
	for _, name := range sortedKeys(p.Types) {
		t := p.Types[name]
		at := path{"types", name}
		if !typeNameRE.MatchString(name) {
			v.add(at, "type name %q must be lower_snake_case", name)
		}
		if len(t.IndexText) == 0 {
			v.add(at.with("index_text"), "at least one part is required")
		}
		for i, part := range t.IndexText {
			for _, alt := range strings.Split(part, "|") {
				v.oneOf(at.with("index_text", i), "field", alt, knownFields)
			}
		}
		seen := map[string]bool{}
		for i, s := range t.Statuses {
			if s == "" || seen[s] {
				v.add(at.with("statuses", i), "status %q is empty or repeated", s)
			}
			seen[s] = true
		}
		if t.DefaultStatus != "" && !seen[t.DefaultStatus] {
			v.add(at.with("default_status"), "default status %q is not one of statuses", t.DefaultStatus)
		}
		if t.Due != "" {
			v.oneOf(at.with("due"), "due rule", t.Due, []string{"none", "optional", "required"})
		}
		d := t.Display
		if d.Primary == "" {
			v.add(at.with("display", "primary"), "primary field is required")
		} else {
			v.oneOf(at.with("display", "primary"), "field", d.Primary, knownFields)
		}
		for i, f := range d.Appendix {
			v.oneOf(at.with("display", "appendix", i), "field", f, knownFields)
		}
		if d.PrimaryTrim < 0 {
			v.add(at.with("display", "primary_trim"), "must be >= 0, got %d", d.PrimaryTrim)
		}
		if d.AppendixTrim < 0 {
			v.add(at.with("display", "appendix_trim"), "must be >= 0, got %d", d.AppendixTrim)
		}
		if d.Neighbour != "" {
			v.oneOf(at.with("display", "neighbour"), "neighbour display", d.Neighbour, []string{NeighbourFull, NeighbourSummary, NeighbourID})
		}
	}
}

func (v *validator) layers(p *Policy) {
	if len(p.Layers) == 0 {
		v.add(path{"layers"}, "at least one layer is required")
	}
	seen := map[string]bool{}
	for i, l := range p.Layers {
		at := path{"layers", i}
		if !pascalRE.MatchString(l.Name) {
			v.add(at.with("name"), "layer name %q must be PascalCase", l.Name)
		}
		if seen[l.Name] {
			v.add(at.with("name"), "layer %q is repeated", l.Name)
		}
		seen[l.Name] = true
		subs := map[string]bool{}
		for j, s := range l.Sublayers {
			if !pascalRE.MatchString(s) {
				v.add(at.with("sublayers", j), "sublayer name %q must be PascalCase", s)
			}
			if subs[s] {
				v.add(at.with("sublayers", j), "sublayer %q is repeated", s)
			}
			subs[s] = true
		}
	}
}

func (v *validator) target(at path, p *Policy, t Target, typeRequired bool) {
	if t.Type != "" || typeRequired {
		if _, ok := p.Types[t.Type]; !ok {
			v.add(at.with("type"), "unknown memory type %q", t.Type)
		}
	}
	if t.Layer == "" {
		v.add(at.with("layer"), "layer is required")
		return
	}
	if !p.HasSublayer(t.Layer, "") {
		v.add(at.with("layer"), "unknown layer %q", t.Layer)
		return
	}
	if t.Sublayer != "" && !p.HasSublayer(t.Layer, t.Sublayer) {
		v.add(at.with("sublayer"), "layer %q has no sublayer %q", t.Layer, t.Sublayer)
	}
}

func (v *validator) classify(p *Policy) {
	v.target(path{"classify", "default"}, p, p.Classify.Default, true)
	names := map[string]bool{}
	for i := range p.Classify.Rules {
		r := &p.Classify.Rules[i]
		at := path{"classify", "rules", i}
		v.ruleName(at, r.Name, names)
		for j, t := range r.WhenType {
			if _, ok := p.Types[t]; !ok {
				v.add(at.with("when_type", j), "unknown memory type %q", t)
			}
		}
		v.target(at, p, r.Target, false)
		if len(r.Keywords) == 0 && r.Regex == "" {
			v.add(at, "rule needs keywords or regex")
		}
		if len(r.Keywords) > 0 {
			alts := make([]string, 0, len(r.Keywords))
			for j, k := range r.Keywords {
				k = strings.Join(strings.Fields(k), " ")
				if k == "" {
					v.add(at.with("keywords", j), "keyword is empty")
					continue
				}
				alts = append(alts, regexp.QuoteMeta(k))
			}
			r.kw = regexp.MustCompile(`(?i)(?:^|[^\pL\pN_])(?:` + strings.Join(alts, "|") + `)(?:$|[^\pL\pN_])`)
		}
		if r.Regex != "" {
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				v.add(at.with("regex"), "bad regex: %v", err)
			}
			r.re = re
		}
	}
}

func (v *validator) ruleName(at path, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.add(at.with("name"), "rule name is required")
	case seen[name]:
		v.add(at.with("name"), "rule name %q is repeated", name)
	}
	seen[name] = true
}

func foldName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func (v *validator) entities(p *Policy) {
	e := p.Entities
	if len(e.Types) == 0 {
		v.add(path{"entities", "types"}, "at least one entity type is required")
	}
	seen := map[string]bool{}
	for i, t := range e.Types {
		if !typeNameRE.MatchString(t) || seen[t] {
			v.add(path{"entities", "types", i}, "entity type %q is not lower_snake_case or is repeated", t)
		}
		seen[t] = true
	}
	names := map[string]int{}
	for i, g := range e.Gazetteer {
		at := path{"entities", "gazetteer", i}
		if strings.TrimSpace(g.Name) == "" {
			v.add(at.with("name"), "name is required")
		}
		if !seen[g.Type] {
			v.add(at.with("type"), "unknown entity type %q", g.Type)
		}
		for j, n := range append([]string{g.Name}, g.Aliases...) {
			f := foldName(n)
			if f == "" {
				continue
			}
			if prev, dup := names[f]; dup && prev != i {
				field := at.with("name")
				if j > 0 {
					field = at.with("aliases", j-1)
				}
				v.add(field, "%q is already used by gazetteer[%d]", n, prev)
				continue
			}
			names[f] = i
		}
	}
}

func (v *validator) saq(s *SAQ) {
	at := path{"saq"}
	if s.MaxLength == 0 {
		s.MaxLength = 30
	}
	if s.MaxLength < 8 || s.MaxLength > 30 {
		v.add(at.with("max_length"), "must be between 8 and 30, got %d", s.MaxLength)
	}
	banned := map[string]bool{}
	for _, w := range s.BannedWords {
		banned[strings.ToLower(w)] = true
	}
	part := func(field path, val string) {
		switch {
		case !pascalRE.MatchString(val):
			v.add(field, "key part %q must be PascalCase", val)
		case banned[strings.ToLower(val)]:
			v.add(field, "key part %q is a banned word", val)
		}
	}
	part(at.with("self_subject"), s.SelfSubject)
	part(at.with("imperative_subject"), s.ImperativeSubject)
	part(at.with("fallback", "subject"), s.Fallback.Subject)
	part(at.with("fallback", "aspect"), s.Fallback.Aspect)
	part(at.with("fallback", "qualifier"), s.Fallback.Qualifier)
	if n := len(s.Fallback.Subject) + len(s.Fallback.Aspect) + len(s.Fallback.Qualifier) + 2; n > s.MaxLength {
		v.add(at.with("fallback"), "fallback key is %d characters, longer than max_length %d", n, s.MaxLength)
	}
	names := map[string]bool{}
	for i, a := range s.Aspects {
		aat := at.with("aspects", i)
		part(aat.with("name"), a.Name)
		if names[a.Name] {
			v.add(aat.with("name"), "aspect %q is repeated", a.Name)
		}
		names[a.Name] = true
		if len(a.Cues) == 0 {
			v.add(aat.with("cues"), "at least one cue is required")
		}
		for _, cue := range sortedKeys(a.Qualifiers) {
			if !contains(a.Cues, cue) {
				v.add(aat.with("qualifiers", cue), "qualifier for %q, which is not a cue", cue)
			}
			part(aat.with("qualifiers", cue), a.Qualifiers[cue])
		}
	}
	for _, from := range sortedKeys(s.Synonyms) {
		if strings.ToLower(from) != from || s.Synonyms[from] == "" {
			v.add(at.with("synonyms", from), "synonyms map lower-case words to non-empty words")
		}
	}
	for _, from := range sortedKeys(s.Antonyms) {
		if strings.ToLower(from) != from || s.Antonyms[from] == "" {
			v.add(at.with("antonyms", from), "antonyms map lower-case words to non-empty words")
		}
	}
}

func (v *validator) roles(p *Policy) {
	if len(p.Roles) == 0 {
		v.add(path{"roles"}, "at least one role is required")
	}
	for _, role := range sortedKeys(p.Roles) {
		if !typeNameRE.MatchString(role) {
			v.add(path{"roles", role}, "role name %q must be lower_snake_case", role)
		}
		for i, perm := range p.Roles[role] {
			v.oneOf(path{"roles", role, i}, "permission", perm, knownPerms)
		}
	}
}

var actions = []string{ActionApprove, ActionQueue, ActionReject}

// sourceKinds mirror graph.SourceKind; policy may not import graph.
var sourceKinds = []string{"AUTHORED", "INGESTED_EVIDENCE", "PROPOSED"}

func (v *validator) gate(p *Policy) {
	g := p.WriteGate
	v.oneOf(path{"gate", "default"}, "action", g.Default, actions)
	names := map[string]bool{}
	for i, r := range g.Rules {
		at := path{"gate", "rules", i}
		v.ruleName(at, r.Name, names)
		v.oneOf(at.with("action"), "action", r.Action, actions)
		m := r.Match
		mat := at.with("match")
		for j, t := range m.Types {
			if _, ok := p.Types[t]; !ok {
				v.add(mat.with("types", j), "unknown memory type %q", t)
			}
		}
		for j, l := range m.Layers {
			if !p.HasSublayer(l, "") {
				v.add(mat.with("layers", j), "unknown layer %q", l)
			}
		}
		for j, s := range m.Sublayers {
			if !p.anyLayerHas(s) {
				v.add(mat.with("sublayers", j), "unknown sublayer %q", s)
			}
		}
		for j, k := range m.SourceKinds {
			v.oneOf(mat.with("source_kinds", j), "source kind", k, sourceKinds)
		}
		for j, role := range m.Roles {
			if _, ok := p.Roles[role]; !ok {
				v.add(mat.with("roles", j), "unknown role %q", role)
			}
		}
		for _, k := range sortedKeys(m.Metadata) {
			if k == "" {
				v.add(mat.with("metadata"), "metadata key is empty")
			}
		}
	}
}

func (p *Policy) anyLayerHas(sublayer string) bool {
	for _, l := range p.Layers {
		if contains(l.Sublayers, sublayer) {
			return true
		}
	}
	return false
}

func (v *validator) retrieval(r *Retrieval) {
	at := path{"retrieval"}
	if r.Mode == "" {
		r.Mode = ModeGraph
	}
	v.oneOf(at.with("mode"), "mode", r.Mode, []string{ModeGraph, ModeVector, ModeKeyword, ModeHybrid})
	if r.Reranker.Kind == "" {
		r.Reranker.Kind = RerankerRRF
	}
	v.oneOf(at.with("reranker", "kind"), "reranker", r.Reranker.Kind, []string{RerankerRRF, RerankerMMR, RerankerNodeDistance})
	if r.Reranker.Kind == RerankerMMR && r.Reranker.Lambda == 0 {
		r.Reranker.Lambda = 0.7
	}
	if r.Reranker.Lambda < 0 || r.Reranker.Lambda > 1 {
		v.add(at.with("reranker", "lambda"), "must be in [0,1], got %g", r.Reranker.Lambda)
	}
	if r.Fusion == "" {
		r.Fusion = FusionRRF
	}
	v.oneOf(at.with("fusion"), "fusion", r.Fusion, []string{FusionRRF, FusionScore, FusionZScore})
	if r.RRFK == 0 {
		r.RRFK = 60
	}
	if r.RRFK < 1 {
		v.add(at.with("rrf_k"), "must be >= 1, got %d", r.RRFK)
	}
	for _, k := range sortedKeys(r.FusionWeights) {
		if v.oneOf(at.with("fusion_weights", k), "signal", k, fusionSignals) && r.FusionWeights[k] < 0 {
			v.add(at.with("fusion_weights", k), "weight must be >= 0, got %g", r.FusionWeights[k])
		}
	}
	if h := r.Hops(); h < 0 || h > 1 {
		v.add(at.with("expansion_hops"), "must be 0 or 1, got %d", h)
	}
	if r.Neighbours.NotesLimit < 0 {
		v.add(at.with("neighbours", "notes_limit"), "must be >= 0, got %d", r.Neighbours.NotesLimit)
	}
	if r.Neighbours.DocsLimit < 0 {
		v.add(at.with("neighbours", "docs_limit"), "must be >= 0, got %d", r.Neighbours.DocsLimit)
	}
	if r.Neighbours.RelationsLimit < 0 {
		v.add(at.with("neighbours", "relations_limit"), "must be >= 0, got %d", r.Neighbours.RelationsLimit)
	}
	if r.TokenBudget < 0 {
		v.add(at.with("token_budget"), "must be >= 0, got %d", r.TokenBudget)
	}
	if r.Relevance.CosineMid == 0 {
		r.Relevance.CosineMid = DefaultCosineMid
	}
	if r.Relevance.CosineWidth == 0 {
		r.Relevance.CosineWidth = DefaultCosineWidth
	}
	if m := r.Relevance.CosineMid; m <= -1 || m >= 2 {
		v.add(at.with("relevance", "cosine_mid"), "must be in (-1,2), got %g", m)
	}
	if c := r.Relevance.Coverage(); c < 0 || c > 1 {
		v.add(at.with("relevance", "coverage_weight"), "must be in [0,1], got %g", c)
	}
	if w := r.Relevance.CosineWidth; w <= 0 || w > 1 {
		v.add(at.with("relevance", "cosine_width"), "must be in (0,1], got %g", w)
	}
	if r.AbstentionThreshold < 0 || r.AbstentionThreshold > 1 {
		v.add(at.with("abstention_threshold"), "must be in [0,1], got %g", r.AbstentionThreshold)
	}
}
