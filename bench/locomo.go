package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// locomoSample is one LoCoMo conversation with its questions, as the bench
// file stores it (only the fields the recall bench reads).
type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// locomoTurn is one dialog turn, the unit the bench stores as a memory.
type locomoTurn struct {
	DiaID   string `json:"dia_id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	At      time.Time
}

// Conversation is a LoCoMo sample made ready for the bench: turns in order
// and questions with normalised evidence.
type Conversation struct {
	ID        string
	Turns     []locomoTurn
	Questions []LoCoMoQuestion
}

// LoCoMoQuestion is one question of a conversation.
type LoCoMoQuestion struct {
	Text string
	// Category is LoCoMo's: 1 multi-hop, 2 temporal, 3 open-domain, 4
	// single-hop, 5 adversarial.
	Category int
	Evidence []string // dialog ids that exist in the conversation
}

// LoadLoCoMo reads the LoCoMo bench file and prepares every conversation.
func LoadLoCoMo(path string) ([]Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var samples []locomoSample
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Conversation, 0, len(samples))
	for _, s := range samples {
		c, err := prepare(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, s.SampleID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// prepare orders the sessions, dates each turn with its session's date and
// normalises the evidence ids.
func prepare(s locomoSample) (Conversation, error) {
	c := Conversation{ID: s.SampleID}
	var sessions []int
	for k := range s.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	exists := map[string]bool{}
	for _, n := range sessions {
		var date string
		if raw, ok := s.Conversation[fmt.Sprintf("session_%d_date_time", n)]; ok {
			_ = json.Unmarshal(raw, &date)
		}
		at, err := time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(date))
		if err != nil {
			return c, fmt.Errorf("session %d date %q: %w", n, date, err)
		}
		var turns []locomoTurn
		if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return c, fmt.Errorf("session %d: %w", n, err)
		}
		for i, t := range turns {
			// Turns of one session share its date; a second apart keeps
			// them in order.
			t.At = at.Add(time.Duration(i) * time.Second)
			c.Turns = append(c.Turns, t)
			exists[t.DiaID] = true
		}
	}
	for _, qa := range s.QA {
		c.Questions = append(c.Questions, LoCoMoQuestion{Text: qa.Question, Category: qa.Category,
			Evidence: normEvidence(qa.Evidence, exists)})
	}
	return c, nil
}

var diaID = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)

// normEvidence splits evidence strings on ";" and whitespace, repairs the
// malformed forms ("D:11:26", "D30:05"), dedupes, and drops ids that are not
// in the dialog.
func normEvidence(ev []string, exists map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range ev {
		for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' }) {
			m := diaID.FindStringSubmatch(strings.TrimSpace(part))
			if m == nil {
				continue
			}
			id := "D" + m[1] + ":" + m[2]
			if exists[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
