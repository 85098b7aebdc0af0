package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress shows how far a long command is (ingest backlog, reindex,
// bench) on stderr, never on stdout: with stderr a terminal, a bar redrawn
// in place with the rate and the time left; otherwise a plain line every
// few seconds and at the end, which a log keeps readable. Under --json the
// plain lines are left out (stderr then carries only the error, if any).
type progress struct {
	w        io.Writer
	label    string // "backlog", "reindex"
	unit     string // "files", "memories"
	terminal bool
	quiet    bool // no plain lines (--json)
	now      func() time.Time
	start    time.Time
	last     time.Time
	drawn    bool
}

// plainEvery is how often the plain line is written when stderr is not a
// terminal.
const plainEvery = 2 * time.Second

func newProgress(w io.Writer, label, unit string, asJSON bool) *progress {
	p := &progress{w: w, label: label, unit: unit, quiet: asJSON, now: time.Now}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	p.start, p.last = p.now(), p.now()
	return p
}

// update reports done of total units (total 0: unknown, no bar and no
// time left); note says what is being worked on (a file's path).
func (p *progress) update(done, total int, note string) {
	now := p.now()
	elapsed := now.Sub(p.start)
	var rate float64
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s %-40.40s", p.line(done, total, rate, true), note)
		p.drawn = true
		return
	}
	if p.quiet || (now.Sub(p.last) < plainEvery && (total == 0 || done < total)) {
		return
	}
	p.last = now
	fmt.Fprintln(p.w, p.line(done, total, rate, false))
}

// line is "label [####----] 12/40 files 3.1/s eta 9s" (the bar only on a
// terminal).
func (p *progress) line(done, total int, rate float64, bar bool) string {
	var b strings.Builder
	b.WriteString(p.label + ":")
	if total > 0 && bar {
		const width = 24
		n := min(width, width*done/total)
		fmt.Fprintf(&b, " [%s%s]", strings.Repeat("#", n), strings.Repeat("-", width-n))
	}
	if total > 0 {
		fmt.Fprintf(&b, " %d/%d", done, total)
	} else {
		fmt.Fprintf(&b, " %d", done)
	}
	if p.unit != "" {
		b.WriteString(" " + p.unit)
	}
	fmt.Fprintf(&b, " %.1f/s", rate)
	if total > 0 && rate > 0 && done < total {
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&b, " eta %s", eta.Round(time.Second))
	}
	return b.String()
}

// stage reports done of total in stage, a run of stages (bench): a new
// stage ends the last one's bar and starts its own clock.
func (p *progress) stage(name string, done, total int) {
	if name != p.label {
		p.done()
		p.label, p.start, p.last = name, p.now(), p.now()
	}
	p.update(done, total, "")
}

// Write passes a log line (a bench stage) through to the writer, after
// ending the bar's line so the two do not run together.
func (p *progress) Write(b []byte) (int, error) {
	p.done()
	return p.w.Write(b)
}

// done ends the bar's line.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
