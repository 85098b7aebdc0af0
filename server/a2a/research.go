package a2a

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// plan is what research reads from a question before searching, without a
// model: the memory types it names ("what did we decide" -> decision), a
// time range it states ("last week", "since 2026-03-01", "in 2025"), and
// the query: the question itself, whose terms, entities and dates the
// engine reads.
type plan struct {
	Query  string    `json:"query"`
	Types  []string  `json:"types,omitempty"`
	After  time.Time `json:"after,omitzero"`
	Before time.Time `json:"before,omitzero"`
}

// typeWords maps words of a question to the memory type they ask for.
var typeWords = map[string]string{
	"decide": "decision", "decided": "decision", "decision": "decision", "decisions": "decision",
	"task": "task", "tasks": "task", "todo": "task", "todos": "task",
	"belief": "belief", "beliefs": "belief", "believe": "belief",
	"skill": "skill", "skills": "skill", "how-to": "skill",
	"episode": "episode", "episodes": "episode",
	"document": "document", "documents": "document", "doc": "document", "docs": "document",
}

// planQuestion reads q at now. Its time range is the period the engine's
// time signal reads from the same question (engine.QueryPeriod): the
// planned search's filter and the ranking inside it agree on what "last
// week" means (Monday to Sunday before this week's Monday) and on the
// time-zone window of a day.
func planQuestion(q string, now time.Time) plan {
	p := plan{Query: q}
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '-') }) {
		if t, ok := typeWords[w]; ok && !seen[t] {
			seen[t] = true
			p.Types = append(p.Types, t)
		}
	}
	p.After, p.Before, _ = engine.QueryPeriod(q, now)
	return p
}

// attempt is one search research ran, as reported in its answer.
type attempt struct {
	Mode    string `json:"mode"`
	TopK    int    `json:"top_k"`
	Relaxed bool   `json:"relaxed_filters"`
	Results int    `json:"results"`
	Outcome string `json:"outcome"`
}

// maxAttempts bounds research's searches.
const maxAttempts = 3

// research answers a question from memory: the planned search (hybrid,
// top 10, the plan's types and time range); if that finds nothing relevant,
// top 20 without the plan's filters; then keywords only. It stops at the
// first attempt with relevant results, and after the third returns what it
// has, marked partial with a warning. Every claim carries its citation;
// contradictions between results are flagged, never resolved.
func (s *Server) research(ctx context.Context, p graph.Principal, r request) (answer, error) {
	pl := planQuestion(r.text, time.Now().UTC())
	tries := []engine.SearchRequest{
		{Query: pl.Query, Mode: "hybrid", Limit: 10, Types: pl.Types, CreatedAfter: pl.After, CreatedBefore: pl.Before},
		{Query: pl.Query, Mode: "hybrid", Limit: 20},
		{Query: pl.Query, Mode: "keyword", Limit: 20},
	}
	var attempts []attempt
	var last engine.SearchResponse
	var lastErr error
	found := false
	for i, sr := range tries[:maxAttempts] {
		a := attempt{Mode: sr.Mode, TopK: sr.Limit, Relaxed: i > 0}
		resp, err := s.engine.Search(ctx, p, sr)
		switch {
		case err != nil:
			if _, rejected := s.describe(skillResearch, err); !rejected {
				return answer{}, err // the server failed: no point retrying
			}
			a.Outcome, lastErr = "refused: "+err.Error(), err
		case resp.Abstained || len(resp.Results) == 0:
			a.Outcome = "nothing relevant"
			if resp.Message != "" {
				a.Outcome += ": " + resp.Message
			}
		default:
			a.Outcome, a.Results, found = "answered", len(resp.Results), true
		}
		attempts = append(attempts, a)
		if err == nil {
			last = resp
		}
		if found {
			break
		}
	}
	if !found && lastErr != nil && len(attempts) == maxAttempts && allRefused(attempts) {
		return answer{}, lastErr // every attempt was refused: the question itself is bad
	}
	claims := claimsOf(last)
	data := map[string]any{"plan": pl, "attempts": attempts, "claims": claims,
		"contradictions": last.Contradictions, "partial": !found}
	status := fmt.Sprintf("%d cited claims after %d attempt(s)", len(claims), len(attempts))
	if !found {
		status = fmt.Sprintf("partial: nothing in memory answered the question after %d attempts", len(attempts))
		data["warning"] = status
	}
	if len(last.Contradictions) > 0 {
		status += fmt.Sprintf("; %d contradiction(s) flagged", len(last.Contradictions))
	}
	return answer{text: render(claims, last.Contradictions, status), data: data, status: status}, nil
}

func allRefused(as []attempt) bool {
	for _, a := range as {
		if !strings.HasPrefix(a.Outcome, "refused") {
			return false
		}
	}
	return true
}
