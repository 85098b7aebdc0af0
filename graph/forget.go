package graph

import (
	"cmp"
	"slices"
)

// Forgetting. Archive hides a memory from every read that does not ask for
// archived ones and Restore brings it back; nothing is lost. Erase is for
// good: it removes a memory's content from every place the store keeps it
// and leaves a tombstone that says only that the memory existed.
//
// What an erase removes, in the erase's transaction:
//   - the memory's title, canonical key, tags, subject and keyword data;
//   - every version's content, summary, index text, content hash and
//     provenance (the version rows stay as empty shells: id, number, time);
//   - every chunk of every version, with its MENTIONS;
//   - the memory's MENTIONS, and every entity no memory or chunk mentions
//     any more (an entity still mentioned elsewhere stays, with its name);
//   - its share of the CO_OCCURS counts (an edge at 0 goes), and its place
//     in its session's NEXT chain: the chain is re-linked around it
//     (Relink), as if it had never been written, and the tombstone leaves
//     the session (its session id is cleared);
//   - every explicit relation from or to the memory (Relations), with
//     its reason;
//   - the memory and its versions from every capsule that CONTAINS them
//     (a capsule keeps its other items);
//   - the memory's pending outbox items (an upsert would embed the text
//     again); with EraseInput.Index a vector-index delete is queued instead;
//   - the content of edits that target the memory and of the gate requests
//     that wrote it (payload, title, reason), the text of the proposals on
//     it and the reasons of the decisions that rejected them, and the
//     reason of every audit event about the memory or those requests
//     (reasons quote titles).
//
// What stays: the memory's id, scope, user, type, visibility, project,
// channel, timestamps, importance and the status StatusErased; SUPERSEDES edges
// to and from it (structure without content: a chain keeps its shape, no
// other memory changes status); audit events without their reasons.
//
// No read returns an erased memory unless its filter lists StatusErased in
// Statuses (a direct fetch included), and no index finds it.

// EraseInput is what Store.Erase writes.
type EraseInput struct {
	// IDs are the memories to erase (at most MaxEraseBatch).
	IDs []string
	// Index queues a vector-index delete for each erased memory (the
	// outbox's "delete" op) in the same transaction.
	Index bool
	// Audit events are written in the same transaction; they must carry
	// no content of the erased memories.
	Audit []AuditEvent
}

// MaxEraseBatch bounds one Erase call; a user's memories are erased in
// batches of this size.
const MaxEraseBatch = 1000

// Erasure counts what an Erase removed.
type Erasure struct {
	// Memories erased now (those already erased are not counted).
	Memories int `json:"memories"`
	// Versions emptied and chunks deleted.
	Versions int `json:"versions"`
	Chunks   int `json:"chunks"`
	// Entities deleted because nothing mentions them any more.
	Entities int `json:"entities"`
	// Outbox items dropped.
	Outbox int `json:"outbox"`
}

// Add sums two erasures.
func (e Erasure) Add(o Erasure) Erasure {
	return Erasure{Memories: e.Memories + o.Memories, Versions: e.Versions + o.Versions, Chunks: e.Chunks + o.Chunks,
		Entities: e.Entities + o.Entities, Outbox: e.Outbox + o.Outbox}
}

// Validate reports an erase input no store may run.
func (in EraseInput) Validate() error {
	if len(in.IDs) == 0 {
		return invalid("ids", "required")
	}
	if len(in.IDs) > MaxEraseBatch {
		return invalid("ids", "lists %d memories, more than %d", len(in.IDs), MaxEraseBatch)
	}
	for _, id := range in.IDs {
		if err := CheckID("ids", id); err != nil {
			return err
		}
	}
	for _, a := range in.Audit {
		if err := a.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Relink re-links a NEXT chain around erased memories: prevs and nexts hold,
// for each erased memory, its NEXT predecessors and successors. Each
// predecessor that is not erased gets an edge to each successor that is
// not erased, found through any run of erased memories, as if they had
// never been written. Pairs come sorted, each once.
func Relink(prevs, nexts map[string][]string) [][2]string {
	seen := map[[2]string]bool{}
	var out [][2]string
	var reach func(from, at string, visited map[string]bool)
	reach = func(from, at string, visited map[string]bool) {
		for _, n := range nexts[at] {
			if _, erased := nexts[n]; erased {
				if !visited[n] {
					visited[n] = true
					reach(from, n, visited)
				}
				continue
			}
			if k := [2]string{from, n}; from != n && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	for e, ps := range prevs {
		for _, p := range ps {
			if _, erased := nexts[p]; !erased {
				reach(p, e, map[string]bool{e: true})
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	return out
}
