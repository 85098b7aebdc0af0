package server

import "github.com/mnemo-dev/mnemo/engine"

// timeTravel reads the as_of (valid time) and known_at (transaction time)
// fields of get, search and read_context: RFC 3339 or YYYY-MM-DD (UTC),
// empty for now (docs/time.md).
func timeTravel(asOf, knownAt string) (engine.TimeTravel, error) {
	var (
		t   engine.TimeTravel
		err error
	)
	if t.AsOf, err = queryTime(asOf, "as_of"); err != nil {
		return t, err
	}
	t.KnownAt, err = queryTime(knownAt, "known_at")
	return t, err
}
