package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testKnownAt: reads as known at a past transaction time (Filter.KnownAt).
// The history, with the instants read at (k0..k4) between its steps:
//
//	k0  nothing written yet
//	    price (v1 "widget costs ten"), shelf, rumour, secret written
//	k1
//	    price gets v2 "widget costs twelve" (a late correction)
//	k2
//	    update supersedes price ("widget costs fifteen")
//	k3
//	    shelf archived; a retract edit on rumour approved (proposed before k3)
//	k4
//	    secret erased
//
// At each instant a read sees what existed then with the status, version,
// successor and approved edits recorded by then; an erasure is never
// undone.
func testKnownAt(t *testing.T, x *suite) {
	s := newScope(t)
	mark := func() time.Time {
		time.Sleep(3 * time.Millisecond)
		at := time.Now().UTC()
		time.Sleep(3 * time.Millisecond)
		return at
	}
	k0 := mark()
	price := x.create(t, memIn(s, "price", "widget costs ten", "widget"))
	shelf := x.create(t, memIn(s, "shelf", "widget shelf aisle", "widget"))
	rumour := x.create(t, memIn(s, "rumour", "widget rumour recall", "widget"))
	secret := x.create(t, memIn(s, "secret", "widget secret formula", "widget"))
	k1 := mark()
	v2, err := x.s.AddVersion(ctx(t), s, price.Memory.ID, graph.VersionInput{Content: "widget costs twelve",
		Entities: []graph.EntityRef{{Name: "widget"}}})
	require.NoError(t, err)
	k2 := mark()
	upd := memIn(s, "update", "widget costs fifteen", "widget")
	upd.Supersedes = price.Memory.ID
	update := x.create(t, upd)
	ed, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditRetract, TargetMemoryID: rumour.Memory.ID,
		CreatedBy: "lib-1"})
	require.NoError(t, err)
	k3 := mark()
	require.NoError(t, x.s.Archive(ctx(t), s, shelf.Memory.ID))
	_, err = x.ed.DecideEdit(ctx(t), s, ed.ID, graph.EditApproved, "lib-2", time.Now().UTC())
	require.NoError(t, err)
	k4 := mark()
	_, err = x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{secret.Memory.ID}})
	require.NoError(t, err)

	name := map[string]string{price.Memory.ID: "price", shelf.Memory.ID: "shelf", rumour.Memory.ID: "rumour",
		secret.Memory.ID: "secret", update.Memory.ID: "update"}
	names := func(ids []string) []string {
		out := []string{}
		for _, id := range ids {
			out = append(out, name[id])
		}
		return out
	}
	name2id := func(n string) string {
		for id, nm := range name {
			if nm == n {
				return id
			}
		}
		return ""
	}
	all := []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	for _, c := range []struct {
		name   string
		at     time.Time
		active []string          // ListMemories, active only
		status map[string]string // GetMemory's status by name; "" = not found
		// price's current version and version count, successor and head
		priceVersion string
		priceCount   int
		priceNext    string
		priceHead    string
		keyword      map[string][]string // query -> names found
		editStatus   graph.EditStatus    // rumour's edit; "" = not written yet
	}{
		{"BeforeEverything", k0, []string{},
			map[string]string{"price": "", "shelf": "", "rumour": "", "secret": "", "update": ""},
			"", 0, "", "", map[string][]string{"widget": {}}, ""},
		{"BeforeTheCorrection", k1, []string{"price", "shelf", "rumour"},
			map[string]string{"price": "active", "shelf": "active", "rumour": "active", "secret": "", "update": ""},
			price.Version.ID, 1, "", "price", map[string][]string{"ten": {"price"}, "twelve": {}, "fifteen": {}, "formula": {}}, ""},
		{"AfterTheCorrection", k2, []string{"price", "shelf", "rumour"},
			map[string]string{"price": "active", "update": ""},
			v2.ID, 2, "", "price", map[string][]string{"ten": {}, "twelve": {"price"}, "fifteen": {}}, ""},
		{"AfterTheSupersession", k3, []string{"update", "shelf", "rumour"},
			map[string]string{"price": "superseded", "update": "active", "shelf": "active", "rumour": "active"},
			v2.ID, 2, "update", "update", map[string][]string{"twelve": {}, "fifteen": {"update"}, "aisle": {"shelf"}, "recall": {"rumour"}},
			graph.EditPending},
		{"AfterArchiveAndRetract", k4, []string{"update"},
			map[string]string{"price": "superseded", "shelf": "archived", "rumour": "", "secret": ""},
			v2.ID, 2, "update", "update", map[string][]string{"aisle": {}, "recall": {}, "formula": {}}, graph.EditApproved},
		{"Now", time.Time{}, []string{"update"},
			map[string]string{"price": "superseded", "shelf": "archived", "rumour": "", "secret": ""},
			v2.ID, 2, "update", "update", map[string][]string{"fifteen": {"update"}, "formula": {}}, graph.EditApproved},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := in(s)
			f.KnownAt = c.at
			assert.ElementsMatch(t, c.active, names(x.listAll(t, f, 10)), "ListMemories")
			direct := f
			direct.Statuses = all
			for n, want := range c.status {
				id := map[string]string{"price": price.Memory.ID, "shelf": shelf.Memory.ID, "rumour": rumour.Memory.ID,
					"secret": secret.Memory.ID, "update": update.Memory.ID}[n]
				m, err := x.s.GetMemory(ctx(t), direct, id)
				if want == "" {
					assert.ErrorIs(t, err, graph.ErrNotFound, "%s should not be found", n)
					continue
				}
				if assert.NoError(t, err, n) {
					assert.Equal(t, graph.Status(want), m.Status, "%s status", n)
				}
			}
			if c.priceCount > 0 {
				m, err := x.s.GetMemory(ctx(t), direct, price.Memory.ID)
				require.NoError(t, err)
				assert.Equal(t, c.priceVersion, m.CurrentVersionID, "price's current version")
				assert.Equal(t, c.priceCount, m.VersionCount, "price's version count")
				assert.Equal(t, c.priceNext, name[m.SupersededBy], "price's successor")
				_, err = x.s.GetVersion(ctx(t), direct, v2.ID)
				if c.priceCount < 2 {
					assert.ErrorIs(t, err, graph.ErrNotFound, "a version written later does not exist")
				} else {
					assert.NoError(t, err)
				}
				head, err := x.s.Resolve(ctx(t), direct, price.Memory.ID)
				require.NoError(t, err)
				assert.Equal(t, c.priceHead, name[head.ID], "head of price's chain")
			}
			for q, want := range c.keyword {
				ks, err := x.s.KeywordSearch(ctx(t), f, q, 10)
				require.NoError(t, err)
				assert.ElementsMatch(t, want, names(scoredIDs(ks)), "KeywordSearch %q", q)
				for _, k := range ks {
					assert.Equal(t, graph.StatusActive, k.Memory.Status, "KeywordSearch %q", q)
				}
			}
			cs, err := x.s.Candidates(ctx(t), f, []string{"widget"}, 10)
			require.NoError(t, err)
			assert.ElementsMatch(t, c.active, names(candIDs(cs)), "Candidates")
			ws, err := x.s.Walk(ctx(t), f, graph.WalkRequest{Entities: map[string]float64{"widget": 1}, Limit: 10})
			require.NoError(t, err)
			var walked []string
			for _, w := range ws {
				walked = append(walked, w.Memory.ID)
				assert.Equal(t, graph.StatusActive, w.Memory.Status, "Walk: the status as known then")
			}
			assert.ElementsMatch(t, c.active, names(walked), "Walk")
			if len(c.active) > 1 {
				ns, err := x.s.Neighbours(ctx(t), f, []string{name2id(c.active[0])}, 10)
				require.NoError(t, err)
				var near []string
				for _, n := range ns {
					near = append(near, n.Memory.ID)
					assert.Equal(t, graph.StatusActive, n.Memory.Status, "Neighbours: the status as known then")
				}
				assert.ElementsMatch(t, c.active[1:], names(near), "Neighbours")
			}
			eds, err := x.ed.ListEdits(ctx(t), f, graph.EditQuery{MemoryIDs: []string{rumour.Memory.ID}})
			require.NoError(t, err)
			if c.editStatus == "" {
				assert.Empty(t, eds, "an edit proposed later does not exist")
			} else if assert.Len(t, eds, 1) {
				assert.Equal(t, c.editStatus, eds[0].Status, "the retract edit")
			}
		})
	}
}
