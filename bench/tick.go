package bench

// Tick reports how far a stage of a run is: done of total units (turns,
// passages, questions). The command line draws it as a progress bar with
// the rate and the time left; a nil Tick reports nothing.
type Tick func(stage string, done, total int)

func (t Tick) at(stage string, done, total int) {
	if t != nil {
		t(stage, done, total)
	}
}
