package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/server"
)

const (
	skillRemember = "remember"
	skillRecall   = "recall"
	skillResearch = "research"
)

// maxText bounds a message's text (the HTTP API's body limit does the rest).
const maxText = 64 << 10

// executor runs one skill per message and reports it as task events.
type executor struct{ s *Server }

// request is a message read for a skill.
type request struct {
	skill string
	text  string
	data  map[string]any
}

func parse(m *a2a.Message) (request, error) {
	var r request
	if m == nil {
		return r, errors.New("no message")
	}
	var text []string
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			text = append(text, p.Text)
		case a2a.DataPart:
			if r.data == nil {
				r.data = p.Data
			}
			if sk, ok := p.Metadata["skill"].(string); ok && r.skill == "" {
				r.skill = sk
			}
			if sk, ok := p.Data["skill"].(string); ok && r.skill == "" {
				r.skill = sk
			}
		case a2a.FilePart:
			return r, errors.New("file parts are not supported: send the content as text")
		}
	}
	if sk, ok := m.Metadata["skill"].(string); ok {
		r.skill = sk
	}
	if r.skill == "" {
		r.skill = skillResearch
	}
	r.text = strings.TrimSpace(strings.Join(text, "\n"))
	switch {
	case r.skill != skillRemember && r.skill != skillRecall && r.skill != skillResearch:
		return r, fmt.Errorf("unknown skill %q: want remember, recall or research", r.skill)
	case r.text == "":
		return r, errors.New("the message has no text: send the content or question as a text part")
	case len(r.text) > maxText:
		return r, fmt.Errorf("the message's text is %d bytes, more than %d", len(r.text), maxText)
	}
	return r, nil
}

// Execute runs the message's skill: submitted (for a new task), working,
// then one artifact and completed; rejected for input the skill refuses,
// failed when the server fails.
func (x *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	end := func(state a2a.TaskState, text string) error {
		ev := a2a.NewStatusUpdateEvent(rc, state, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text}))
		ev.Final = true
		return q.Write(ctx, ev)
	}
	p, ok := server.PrincipalFrom(ctx)
	if !ok {
		return end(a2a.TaskStateRejected, "missing API key (Authorization: Bearer KEY)")
	}
	req, err := parse(rc.Message)
	if err != nil {
		return end(a2a.TaskStateRejected, err.Error())
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	var out answer
	switch req.skill {
	case skillRemember:
		out, err = x.remember(ctx, p, req)
	case skillRecall:
		out, err = x.recall(ctx, p, req)
	default:
		out, err = x.s.research(ctx, p, req)
	}
	if err != nil {
		msg, rejected := x.s.describe(req.skill, err)
		if rejected {
			return end(a2a.TaskStateRejected, msg)
		}
		return end(a2a.TaskStateFailed, msg)
	}
	data, err := plain(out.data)
	if err != nil {
		return end(a2a.TaskStateFailed, "internal error: "+err.Error())
	}
	art := a2a.NewArtifactEvent(rc, a2a.TextPart{Text: out.text}, a2a.DataPart{Data: data})
	art.Artifact.Name = req.skill
	art.LastChunk = true
	if err := q.Write(ctx, art); err != nil {
		return err
	}
	return end(a2a.TaskStateCompleted, out.status)
}

// Cancel ends a task the caller owns; the skills are short, so a running
// one finishes its engine call first.
func (x *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// answer is a skill's result: text for people, data for programs, and a
// one-line status.
type answer struct {
	text   string
	data   map[string]any
	status string
}

func (x *executor) remember(ctx context.Context, p graph.Principal, r request) (answer, error) {
	in := engine.IngestRequest{Content: r.text, Type: str(r.data, "type"), Title: str(r.data, "title"),
		Tags: strs(r.data, "tags"), Visibility: graph.Visibility(str(r.data, "visibility")), SessionID: str(r.data, "session_id")}
	res, err := x.s.engine.Ingest(ctx, p, in)
	if err != nil {
		return answer{}, err
	}
	text := fmt.Sprintf("%s memory %s", res.Status, res.ID)
	if res.RequestID != "" {
		text = fmt.Sprintf("queued for review as request %s (rule %s)", res.RequestID, res.Rule)
	}
	return answer{text: text, status: text, data: map[string]any{
		"status": res.Status, "memory_id": res.ID, "version_id": res.VersionID, "request_id": res.RequestID,
		"type": res.Type, "supersedes": res.Supersedes, "rule": res.Rule,
	}}, nil
}

func (x *executor) recall(ctx context.Context, p graph.Principal, r request) (answer, error) {
	resp, err := x.s.engine.Search(ctx, p, engine.SearchRequest{Query: r.text, Mode: str(r.data, "mode"),
		Limit: num(r.data, "top_k"), Types: strs(r.data, "types")})
	if err != nil {
		return answer{}, err
	}
	claims := claimsOf(resp)
	status := fmt.Sprintf("%d results", len(claims))
	if resp.Abstained {
		status = "nothing relevant: " + resp.Message
	}
	data := map[string]any{"results": claims, "contradictions": resp.Contradictions, "abstained": resp.Abstained, "mode": resp.Mode}
	if len(resp.Dates) > 0 {
		data["dates"] = resp.Dates // the spans of time the query named, as the search read them
	}
	return answer{text: render(claims, resp.Contradictions, status), status: status, data: data}, nil
}

// claim is one cited statement of an answer: a result's content and the
// memory version it came from.
type claim struct {
	Claim          string         `json:"claim"`
	Title          string         `json:"title,omitempty"`
	Type           string         `json:"type"`
	Confidence     float64        `json:"confidence"`
	Citation       graph.Citation `json:"citation"`
	Flags          []string       `json:"flags,omitempty"`
	ContradictedBy []string       `json:"contradicted_by,omitempty"`
}

func claimsOf(resp engine.SearchResponse) []claim {
	against := map[string][]string{}
	for _, c := range resp.Contradictions {
		against[c.A] = append(against[c.A], c.B)
		against[c.B] = append(against[c.B], c.A)
	}
	out := make([]claim, 0, len(resp.Results))
	for _, r := range resp.Results {
		out = append(out, claim{Claim: r.Content, Title: r.Memory.Title, Type: r.Memory.Type, Confidence: r.Confidence,
			Citation: r.Citation, Flags: r.Flags, ContradictedBy: against[r.Memory.ID]})
	}
	return out
}

// render writes claims as text, each with its citation [memory@version].
func render(claims []claim, contradictions []engine.Contradiction, status string) string {
	var b strings.Builder
	b.WriteString(status)
	for _, c := range claims {
		fmt.Fprintf(&b, "\n- %s [%s@%s]", oneLine(c.Claim), c.Citation.ElementID, c.Citation.VersionID)
		if len(c.ContradictedBy) > 0 {
			fmt.Fprintf(&b, " (contradicted by %s)", strings.Join(c.ContradictedBy, ", "))
		}
	}
	for _, c := range contradictions {
		fmt.Fprintf(&b, "\nwarning: %s and %s contradict each other (%s)", c.A, c.B, c.Reason)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// plain is m as JSON values only (maps, slices, strings, float64, bool):
// the SDK copies artifacts with gob, which knows no mnemo type.
func plain(m map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int {
	f, _ := m[k].(float64)
	return int(f)
}

func strs(m map[string]any, k string) []string {
	var out []string
	if l, ok := m[k].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
