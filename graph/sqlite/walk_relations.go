package sqlite

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"database/sql"

	"github.com/mnemo-dev/mnemo/graph"
)

// walkRelated lists the admitted memories (%[1]s: the filter on m) related
// to a list of memories, either way, by relations the filter sees (%[2]s:
// the scope rule on r), as (the listed memory's rid, the other's rid and
// id). Relies on the relations unique key (from) and relations_to.
const walkRelated = `SELECT j.value, m.rid, m.id FROM json_each(?) j CROSS JOIN relations r ON r.from_rid = j.value
CROSS JOIN memories m ON m.rid = r.to_rid WHERE %[2]s AND %[1]s
UNION
SELECT j.value, m.rid, m.id FROM json_each(?) j CROSS JOIN relations r ON r.to_rid = j.value
CROSS JOIN memories m ON m.rid = r.from_rid WHERE %[2]s AND %[1]s`

// relationScope is the scope rule of a read under f on relations r.
func relationScope(f graph.Filter) *where {
	rs := &where{}
	rs.readScope("r", f)
	return rs
}

// walkRelatedText is walkRelated for a walk under f with filter w.
func walkRelatedText(f graph.Filter, w *where) string {
	return fmt.Sprintf(walkRelated, w.sql(), relationScope(f).sql())
}

// related is the walk's relation step, after the second hop: the admitted
// memories related to any memory loaded join the neighbourhood while there
// is room (by id, as on every store), without their MENTIONS edges; it
// returns the relations among the memories loaded as sorted id pairs, each
// once, for links of weight walk.RelationWeight. Statement i is
// walkRelatedText.
func (l *walkLoad) related(run func(int, ...any) (*sql.Rows, error), i int, f graph.Filter, w *where) ([][2]string, error) {
	if len(l.order) == 0 {
		return nil, nil
	}
	rs := relationScope(f)
	js, _ := json.Marshal(l.order)
	args := append(append([]any{string(js)}, rs.args...), w.args...)
	args = append(append(append(args, string(js)), rs.args...), w.args...)
	rows, err := run(i, args...)
	if err != nil {
		return nil, err
	}
	type rel struct {
		from, rid int64
		id        string
	}
	got, err := collect(rows, func(sc scanner) (x rel, err error) { return x, sc.Scan(&x.from, &x.rid, &x.id) })
	if err != nil {
		return nil, err
	}
	slices.SortFunc(got, func(a, b rel) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(l.ids[a.from], l.ids[b.from])) })
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, x := range got {
		from := l.ids[x.from]
		if from == "" || !l.add(x.rid, x.id) || from == x.id {
			continue
		}
		p := [2]string{min(from, x.id), max(from, x.id)}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return out, nil
}
