package a2a

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// plan is what research reads from a question before searching, without a
// model: the memory types it names ("what did we decide" -> decision), a
// time range it states ("last week", "since 2026-03-01", "in 2025"), and
// the query terms (the question itself: the engine extracts terms and
// entities; the words that only set a type or a time are dropped).
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

var (
	lastN     = regexp.MustCompile(`\b(?:in the )?(?:last|past) (\d{1,3}) (day|week|month)s?\b`)
	lastUnit  = regexp.MustCompile(`\b(?:last|past|this) (day|week|month|year)\b`)
	sinceDate = regexp.MustCompile(`\bsince (\d{4}-\d{2}-\d{2})\b`)
	inYear    = regexp.MustCompile(`\bin ((?:19|20)\d{2})\b`)
	relDay    = regexp.MustCompile(`\b(today|yesterday)\b`)
)

// planQuestion reads q at now.
func planQuestion(q string, now time.Time) plan {
	p := plan{Query: q}
	lower := strings.ToLower(q)
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '-') }) {
		if t, ok := typeWords[w]; ok && !seen[t] {
			seen[t] = true
			p.Types = append(p.Types, t)
		}
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	unit := func(u string, n int) time.Time {
		switch u {
		case "day":
			return now.AddDate(0, 0, -n)
		case "week":
			return now.AddDate(0, 0, -7*n)
		case "month":
			return now.AddDate(0, -n, 0)
		default:
			return now.AddDate(-n, 0, 0)
		}
	}
	switch {
	case lastN.MatchString(lower):
		m := lastN.FindStringSubmatch(lower)
		n, _ := strconv.Atoi(m[1])
		p.After = unit(m[2], n)
	case lastUnit.MatchString(lower):
		p.After = unit(lastUnit.FindStringSubmatch(lower)[1], 1)
	case sinceDate.MatchString(lower):
		if t, err := time.Parse("2006-01-02", sinceDate.FindStringSubmatch(lower)[1]); err == nil {
			p.After = t
		}
	case inYear.MatchString(lower):
		y, _ := strconv.Atoi(inYear.FindStringSubmatch(lower)[1])
		p.After = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		p.Before = p.After.AddDate(1, 0, 0)
	case relDay.MatchString(lower):
		p.After = day
		if relDay.FindStringSubmatch(lower)[1] == "yesterday" {
			p.After, p.Before = day.AddDate(0, 0, -1), day
		}
	}
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
