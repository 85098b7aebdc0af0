package neo4j

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
)

// Keyword search is BM25 computed by mnemo (graph/bm25), not Lucene's
// score: Lucene's statistics (document count, average length, document
// frequencies) are the whole index's, every tenant's, so one tenant's writes
// would move another's scores. Each memory carries what BM25 needs of it:
//
//   - Memory.kw_tf, kw_len: the distinct terms of the title and current text
//     (bm25.Index) with each one's title-weighted frequency, as a string
//     " term:f term:f ", and the length in tokens;
//   - Memory.kw_seq: the keyword sequence of the write that last changed
//     them (below).
//
// Each mnemo process holds a keyword index of the graph in memory
// (graph/kwindex, as the embedded store does), built from those properties
// and kept up to date by the keyword sequence (below), and ranks there; the
// filter then runs in Neo4j on the best matches, a batch at a time. Scoring
// in Cypher read every candidate holding a query term, 18-22 µs each, which
// at 100k memories was 250-800 ms a search (docs/benchmarks.md).
//
// Until d549f01 (2026-11-28) the search scored in Cypher, from a fulltext
// index over Memory.kw_text with KeywordGroup nodes counting each group's
// memories and tokens; Open drops that index and those nodes (memories
// written before keep kw_text and kw_group, which nothing reads).

// keywordProps sets the keyword properties of a memory with title and
// indexed text body on p, stemming with stem.
func keywordProps(p map[string]any, title, body string, stem func(string) string) {
	d := bm25.IndexWith(title, body, stem)
	var tf strings.Builder
	tf.WriteByte(' ')
	for i, t := range d.Terms {
		fmt.Fprintf(&tf, "%s:%d ", t, d.Freqs[i])
	}
	p["kw_tf"], p["kw_len"] = tf.String(), d.Len
}

// The keyword index (graph/kwindex) is held in each mnemo process, as on
// the embedded store, and follows the graph by a sequence per tenant: every
// write transaction that changes a memory's keyword properties (a create, a
// new version, an erase, the backfill) adds one to its tenant's
// KeywordLog.seq and stamps the memories it changed with the new value
// (Memory.kw_seq). The log node stays locked until the write commits, so
// sequence numbers commit in their order: a reader that sees seq S has every
// write up to S. Before each search a process reads its tenant's seq and,
// when it has moved, the memories stamped beyond what it applied
// (memory_kw_seq); a memory changed again since is read in its newer state,
// which the next catch-up reads again. A process's first search of a tenant
// reads all of its memories. Another process's writes are seen on the next
// search; a rolled-back write was never stamped.

// keywordLogCypher adds one to the KeywordLog sequence of each tenant a
// write changed ($logs, in tenant order, so that writes lock them in one
// order) and stamps the memories changed. Uses keyword_log and memory_id.
const keywordLogCypher = `
UNWIND $logs AS l
MERGE (k:KeywordLog {tenant_id: l.tenant_id})
  ON CREATE SET k.seq = 0
SET k.seq = k.seq + 1
WITH k, l
UNWIND l.ids AS id
MATCH (m:Memory {id: id})
SET m.kw_seq = k.seq`

// kwStamps are the memories a write changed the keyword properties of, by
// tenant.
type kwStamps map[string][]string

func (st *kwStamps) add(tenant, id string) {
	if *st == nil {
		*st = kwStamps{}
	}
	(*st)[tenant] = append((*st)[tenant], id)
}

// rows are the stamps as keywordLogCypher's parameter, in tenant order.
func (st kwStamps) rows() []map[string]any {
	out := make([]map[string]any, 0, len(st))
	for _, tenant := range slices.Sorted(maps.Keys(st)) {
		out = append(out, map[string]any{"tenant_id": tenant, "ids": st[tenant]})
	}
	return out
}

// stampKeywords runs keywordLogCypher for st in tx.
func stampKeywords(ctx context.Context, tx txn, st kwStamps) error {
	if len(st) == 0 {
		return nil
	}
	_, err := collect(ctx, tx, keywordLogCypher, map[string]any{"logs": st.rows()})
	return err
}

// kwSeqCypher reads a tenant's keyword sequence. Uses keyword_log.
const kwSeqCypher = `
OPTIONAL MATCH (k:KeywordLog {tenant_id: $tenant})
RETURN coalesce(k.seq, 0) AS seq`

// kwChangedCypher reads the keyword properties and the entities of a
// tenant's memories stamped after $after (an erased memory has neither, and
// leaves the keyword and mention indexes).
// Uses memory_kw_seq.
var kwChangedCypher = `
MATCH (m:Memory) WHERE m.tenant_id = $tenant AND m.kw_seq > $after
RETURN ` + kwRowProjection

// kwAllCypher reads the keyword properties and the entities of every
// memory of a tenant that has them. Uses memory_tenant_created.
var kwAllCypher = `
MATCH (m:Memory) WHERE m.tenant_id = $tenant AND m.created_at IS NOT NULL AND m.kw_len IS NOT NULL
RETURN ` + kwRowProjection

// kwRowProjection is a memory as the catch-up reads it: its keyword
// properties, its entities as [norm name, aliases] (one expansion of its
// MENTIONS for both), and what the walk admits it by and follows from it
// in the process (memAttrs, memLink) and the relations the walk's relation
// step follows (memRel).
var kwRowProjection = `m.id AS id, m.created_at AS created_at, m.org_id AS org_id, m.repo_id AS repo_id,
       m.user_id AS user_id, m.scope AS visibility, m.kw_tf AS kw_tf, m.kw_len AS kw_len,
       [(m)-[:MENTIONS]->(x:Entity) | [x.norm_name, x.alias_norms]] AS entities,
       m.status AS status, m.type AS type, m.tags AS tags, m.subject_type AS subject_type,
       m.subject_id AS subject_id, m.project_id AS project_id, m.session_id AS session_id,
       m.valid_from AS valid_from, m.valid_to AS valid_to, m.blocked_channels AS blocked_channels,
       m.quarantined AS quarantined, [(m)-[l:NEXT|SUPERSEDES]-(o:Memory) WHERE o.kw_len IS NOT NULL | [o.id, type(l)]] AS links,
       [(m)-[n:` + relationTypes() + `]-(o:Memory) WHERE o.kw_len IS NOT NULL | [o.id, n.org_id, n.repo_id]] AS rels`

// kwTenantsCypher lists the tenants whose keyword sequence has moved, most
// keyword writes first (WarmKeywordIndex, in the background at a server's
// start, reads them in this order until the indexes' bound): one KeywordLog
// per tenant, not every memory. A tenant whose every memory was erased is
// listed too, and reads nothing.
const kwTenantsCypher = `
MATCH (k:KeywordLog)
RETURN k.tenant_id AS tenant
ORDER BY k.seq DESC, k.tenant_id`

// kwKey is a memory in the keyword index: its creation time (Unix ns) and
// id, which order ties newest first as the other stores do.
type kwKey struct {
	at int64
	id string
}

func kwNewer(a, b kwKey) bool { return a.at > b.at || (a.at == b.at && a.id > b.id) }

// kwWindow is how many rows of a catch-up go into the keyword index at a
// time.
const kwWindow = 4096

// keywords is a process's keyword index of the graph and, per tenant, the
// sequence it has applied (a tenant absent has not been read, or was
// dropped).
//
// What the two indexes hold is bounded: past limit memories across
// tenants (a memory of more than termsPerMemory distinct terms counting
// for more: units), a catch-up drops the tenants least recently used,
// whole, until the rest fit (a tenant's next search reads it again, as its first did).
// A tenant a search is using (between sync and its release) is never
// dropped, nor the one just read, so one tenant larger than the bound is
// held alone.
type keywords struct {
	*kwindex.Index[kwKey]
	mentions *mentionIndex // the entities of the same memories (mentions.go)
	limit    int           // memories held across tenants; <= 0: no bound
	syncMu   sync.Mutex    // one catch-up (and eviction) at a time
	mu       sync.RWMutex
	applied  map[string]int64
	held     map[string]held   // tenant -> what it holds
	used     map[string]uint64 // tenant -> clock at its last sync
	pins     map[string]int    // tenant -> searches between sync and release
	clock    uint64
	dropped  int64 // tenants dropped since the process started
}

func newKeywords(limit int) *keywords {
	return &keywords{Index: kwindex.New(kwNewer), mentions: newMentionIndex(), limit: limit,
		applied: map[string]int64{}, held: map[string]held{}, used: map[string]uint64{}, pins: map[string]int{}}
}

// sync brings tenant's part of the index, and of the mention index, up to
// the sequence tx reads, and keeps it until release is called: the caller
// reads the indexes in between, and calls release (once) when done, also
// when sync fails.
func (k *keywords) sync(ctx context.Context, tx txn, tenant string) (release func(), err error) {
	release = k.pin(tenant)
	return release, k.catchUp(ctx, tx, tenant)
}

// pin marks tenant used now and keeps it from being dropped until the
// function it returns is called (more calls do nothing).
func (k *keywords) pin(tenant string) func() {
	k.mu.Lock()
	k.pins[tenant]++
	k.clock++
	k.used[tenant] = k.clock
	k.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if k.pins[tenant]--; k.pins[tenant] <= 0 {
				delete(k.pins, tenant)
			}
		})
	}
}

func (k *keywords) catchUp(ctx context.Context, tx txn, tenant string) error {
	seq, err := keywordSeq(ctx, tx, tenant)
	if err != nil {
		return err
	}
	fresh := func() bool {
		k.mu.RLock()
		defer k.mu.RUnlock()
		applied, ok := k.applied[tenant]
		return ok && applied >= seq
	}
	if fresh() {
		return nil
	}
	k.syncMu.Lock()
	defer k.syncMu.Unlock()
	if fresh() {
		return nil
	}
	k.mu.RLock()
	applied, loaded := k.applied[tenant]
	k.mu.RUnlock()
	q, params := kwAllCypher, map[string]any{"tenant": tenant}
	if loaded {
		q, params = kwChangedCypher, map[string]any{"tenant": tenant, "after": applied}
	}
	// The rows stream into the keyword index a window at a time (a
	// tenant's first read is all its memories: at 1M, holding every record
	// at once took gigabytes); the mention index takes the entities, a
	// tenth of the bytes, in one apply at the end.
	var rows []mentionRow
	err = stream(ctx, tx, q, params, kwWindow, func(recs []*neo4jdrv.Record) {
		k.Update(func(w kwindex.Writer[kwKey]) {
			for _, r := range recs {
				p := r.AsMap()
				at, _ := p["created_at"].(time.Time)
				key := kwKey{at: at.UnixNano(), id: str(p, "id")}
				n, ok := p["kw_len"].(int64)
				row := mentionRow{key: key, gone: !ok}
				if ok {
					for _, e := range p["entities"].([]any) {
						e := e.([]any)
						norm := e[0].(string)
						row.entities = append(row.entities, norm)
						aliases, _ := e[1].([]any)
						for _, a := range aliases {
							row.aliases = append(row.aliases, [2]string{a.(string), norm})
						}
					}
					row.attrs = attrsOf(p)
					for _, l := range p["links"].([]any) {
						l := l.([]any)
						row.links = append(row.links, memLink{id: l[0].(string), typ: intern(l[1].(string))})
					}
					for _, r := range p["rels"].([]any) {
						r := r.([]any)
						org, _ := r[1].(string)
						repo, _ := r[2].(string)
						row.rels = append(row.rels, memRel{id: r[0].(string), org: intern(org), repo: intern(repo)})
					}
					sc := scopeOf(p)
					sc.TenantID = tenant
					w.Put(key, sc, str(p, "user_id"), graph.Visibility(str(p, "visibility")), kwDoc(str(p, "kw_tf"), n))
				} else {
					w.Drop(tenant, key)
				}
				rows = append(rows, row)
			}
		})
	})
	if err != nil {
		return err
	}
	k.mentions.apply(tenant, rows)
	memories, postings := k.Held(tenant)
	k.mu.Lock()
	k.applied[tenant] = max(applied, seq)
	k.held[tenant] = held{memories: memories, units: units(memories, postings)}
	victims := k.victims(tenant)
	k.mu.Unlock()
	for _, v := range victims {
		k.Update(func(w kwindex.Writer[kwKey]) { w.DropTenant(v) })
		k.mentions.drop(v)
	}
	return nil
}

// victims picks the tenants to drop so that what is held fits the bound,
// least recently used first, never a pinned one nor keep, and forgets them
// (their applied sequence first, so no search takes their parts for
// fresh). It runs under syncMu, so no catch-up fills a victim's parts
// again before the caller has dropped them, and under mu.
func (k *keywords) victims(keep string) []string {
	total := k.total()
	if k.limit <= 0 || total <= k.limit {
		return nil
	}
	var cands []string
	for t := range k.held {
		if t != keep && k.pins[t] == 0 {
			cands = append(cands, t)
		}
	}
	slices.SortFunc(cands, func(a, b string) int { return cmp.Compare(k.used[a], k.used[b]) })
	var out []string
	for _, t := range cands {
		if total <= k.limit {
			break
		}
		total -= k.held[t].units
		out = append(out, t)
		delete(k.applied, t)
		delete(k.held, t)
		delete(k.used, t)
		k.dropped++
	}
	return out
}

// heldNow reports what the indexes hold (Store.IndexHeld).
func (k *keywords) heldNow() graph.IndexHeld {
	k.mu.RLock()
	defer k.mu.RUnlock()
	h := graph.IndexHeld{Units: k.total(), Tenants: len(k.held), Limit: max(k.limit, 0), Dropped: k.dropped}
	for _, t := range k.held {
		h.Memories += t.memories
	}
	return h
}

// held is what one tenant's part of the indexes holds: its memories, and
// the units they count for toward the bound.
type held struct{ memories, units int }

// termsPerMemory is the distinct terms (postings) a memory of the bound
// stands for. The indexes' memory grows with postings more than with
// memories: a note holds a few dozen terms (the 1M corpus of
// docs/benchmarks.md ~50, at about 1 KiB a memory), a long document
// hundreds or thousands. A tenant counts as its memories, or as its
// postings over termsPerMemory when that is more, so that a tenant of
// long documents cannot hold many times the bound's memory.
const termsPerMemory = 64

// units is what memories holding postings in all count toward the bound.
func units(memories, postings int) int {
	return max(memories, (postings+termsPerMemory-1)/termsPerMemory)
}

// total is the units held across tenants; the caller holds mu.
func (k *keywords) total() int {
	n := 0
	for _, t := range k.held {
		n += t.units
	}
	return n
}

// IndexHeld implements graph.IndexHolder: what the process's keyword and
// mention indexes hold, and the tenants dropped to keep them within
// Config.IndexMemories.
func (s *Store) IndexHeld() graph.IndexHeld { return s.kw.heldNow() }

// full reports whether the indexes hold their bound's worth already.
func (k *keywords) full() bool {
	h := k.heldNow()
	return h.Limit > 0 && h.Units >= h.Limit
}

// keywordSeq reads tenant's keyword sequence in tx: it moves with every
// write that changes the keyword properties or the MENTIONS of the
// tenant's memories (a create, a new version, an erase).
func keywordSeq(ctx context.Context, tx txn, tenant string) (int64, error) {
	recs, err := collect(ctx, tx, kwSeqCypher, map[string]any{"tenant": tenant})
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	v, _ := recs[0].Get("seq")
	seq, _ := v.(int64)
	return seq, nil
}

// kwDoc reads a memory's kw_tf (" term:f term:f ") and kw_len back into the
// bm25.Doc they were written from.
func kwDoc(tf string, n int64) bm25.Doc {
	d := bm25.Doc{Len: n}
	for _, f := range strings.Fields(tf) {
		i := strings.LastIndexByte(f, ':')
		if i <= 0 {
			continue
		}
		c, err := strconv.ParseInt(f[i+1:], 10, 64)
		if err != nil {
			continue
		}
		d.Terms = append(d.Terms, f[:i])
		d.Freqs = append(d.Freqs, c)
	}
	return d
}

// KeywordSearch ranks memories by BM25 relevance of query over their title
// and current version's text, with the statistics of the memories f admits
// (graph/kwindex). Any query term matches (OR). The ranking comes from the
// process's index; the filter runs over the process's copy where it can
// (keywordOverCopy, the hits kept read with the whole filter in Neo4j),
// else in Neo4j on the best matches, a batch at a time, until limit pass.
func (s *Store) KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error) {
	return s.KeywordSearchRanked(ctx, f, query, limit, 0, nil)
}

// KeywordSearchRanked implements graph.KeywordRanker: over the process's
// copy, ranked hears the first n ids keywordOverCopy keeps before it reads
// them.
func (s *Store) KeywordSearchRanked(ctx context.Context, f graph.Filter, query string, limit, n int,
	ranked func(ids []string)) ([]graph.Scored, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: keyword search: %w", err)
	}
	terms := bm25.QueryTerms(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if !f.KnownAt.IsZero() {
		out, err := s.keywordAsKnown(ctx, f, terms, limit)
		if err != nil {
			return nil, fmt.Errorf("neo4j: keyword search: %w", err)
		}
		return out, nil
	}
	if adm, ok := inProcess(f); ok && !s.cypherFilter.Load() {
		out, err := read(ctx, s, func(tx txn) ([]graph.Scored, error) {
			return s.keywordOverCopy(ctx, tx, f, &adm, terms, limit, n, ranked)
		})
		if err != nil {
			return nil, fmt.Errorf("neo4j: keyword search: %w", err)
		}
		return out, nil
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Scored, error) {
		release, err := s.kw.sync(ctx, tx, f.Scope.TenantID)
		defer release()
		if err != nil {
			return nil, err
		}
		ranking := s.kw.Rank(f, terms)
		defer ranking.Release()
		var (
			out    []graph.Scored
			keys   []kwKey
			ids    []string
			scores = map[kwKey]float64{}
		)
		loaded, passed := 0, 0
		for batch, round := limit, 0; len(out) < limit && ranking.Len() > 0; round++ {
			keys, ids = ranking.Next(keys[:0], scores, batch), ids[:0]
			for _, k := range keys {
				ids = append(ids, k.id)
			}
			recs, err := collect(ctx, tx, getMemoriesCypher, filterParams(f, map[string]any{"ids": ids}))
			if err != nil {
				return nil, err
			}
			loaded, passed = loaded+len(keys), passed+len(recs)
			for _, r := range recs {
				i, _ := r.Get("i")
				if len(out) < limit {
					out = append(out, graph.Scored{Memory: memoryOf(r, "m"), Score: scores[keys[i.(int64)]]})
				}
			}
			batch = kwindex.Refill(limit-len(out), loaded, passed, batch, round)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: keyword search: %w", err)
	}
	return out, nil
}

// keywordOverCopy is KeywordSearch with the filter over the process's copy
// (walk_local.go): the best matches it admits, limit of them, read with
// the whole filter in Neo4j in one statement that also reads the keyword
// sequence (overCopy), instead of filtering in Neo4j a batch at a time.
func (s *Store) keywordOverCopy(ctx context.Context, tx txn, f graph.Filter, adm *admission,
	terms []string, limit, n int, ranked func([]string)) ([]graph.Scored, error) {
	var out []graph.Scored
	err := s.kw.overCopy(ctx, tx, f.Scope.TenantID, func() (int64, error) {
		out = nil
		ids, score := s.rankOverCopy(f, adm, terms, limit)
		if ranked != nil { // the first ranking only: a rerun after a catch-up reads on
			ranked(slices.Clone(ids[:min(n, len(ids))]))
			ranked = nil
		}
		if len(ids) == 0 {
			return -1, nil
		}
		ms, seq, err := readKept(ctx, tx, f, ids)
		for _, m := range ms {
			out = append(out, graph.Scored{Memory: m, Score: score[m.ID]})
		}
		return seq, err
	})
	return out, err
}

// rankOverCopy ranks the matches of terms and keeps, best first, the first
// limit the copy admits under adm, with their scores.
func (s *Store) rankOverCopy(f graph.Filter, adm *admission, terms []string, limit int) ([]string, map[string]float64) {
	ranking := s.kw.Rank(f, terms)
	defer ranking.Release()
	scores := map[kwKey]float64{}
	var keys []kwKey
	var ids []string
	score := map[string]float64{}
	s.kw.mentions.view(f.Scope.TenantID, func(t *tenantMentions) {
		// Each round pops the shortfall: the ranking is a heap in the
		// process, so no more is ranked than is needed.
		for len(ids) < limit && ranking.Len() > 0 {
			keys = ranking.Next(keys[:0], scores, limit-len(ids))
			for _, k := range keys {
				if t.admitted(adm, k.id) {
					ids = append(ids, k.id)
					score[k.id] = scores[k]
				}
			}
		}
	})
	return ids, score
}

// WarmKeywordIndex reads every tenant's keywords into the process's index
// now rather than on each tenant's first keyword search, until the index
// holds Config.IndexMemories (the rest wait for their first search). A
// server calls it in the background at start. The tenants it has read stay
// pinned until it ends, so that the last one read, which may pass the
// bound, does not drop those before it; the next catch-up of another
// tenant drops what is over.
func (s *Store) WarmKeywordIndex(ctx context.Context) error {
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	_, err := read(ctx, s, func(tx txn) (struct{}, error) {
		recs, err := collect(ctx, tx, kwTenantsCypher, nil)
		if err != nil {
			return struct{}{}, err
		}
		for _, r := range recs {
			tenant, _ := r.Get("tenant")
			if s.kw.full() {
				break
			}
			release, err := s.kw.sync(ctx, tx, tenant.(string))
			releases = append(releases, release)
			if err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	if err != nil {
		return fmt.Errorf("neo4j: warm keyword index: %w", err)
	}
	return nil
}

// Backfill of the keyword properties for memories written before they
// existed (their text is in search_text, which memory_search_en covered).
// An erased memory has none (the erase removes them); one that has them was
// given them by an earlier backfill, which took erased memories for old
// ones, and loses them again. Each memory the backfill changes is stamped
// with its tenant's keyword sequence, so every process's index sees it.
const (
	kwMissingCypher = `
MATCH (m:Memory) WHERE (m.kw_len IS NULL) = (m.status <> 'erased')
RETURN m.id AS id, m.tenant_id AS tenant_id, m.org_id AS org_id, m.repo_id AS repo_id, m.user_id AS user_id,
       m.scope AS visibility, m.title AS title, coalesce(m.search_text, '') AS body, m.status = 'erased' AS erased
LIMIT 500`
	kwBackfillCypher = `
UNWIND $rows AS r
MATCH (m:Memory {id: r.id})
SET m += r.props
REMOVE m.search_text`
	// kwLegacyCypher deletes the KeywordGroup nodes the search in
	// Cypher read (up to d549f01), a batch at a time.
	kwLegacyCypher = `
MATCH (k:KeywordGroup) WITH k LIMIT 1000 DETACH DELETE k RETURN count(*) AS n`
)

// The backfill's mark: a Migration node written once the backfill has run
// to its end, so that a later Open reads one node where the probe
// (kwMissingCypher) read every memory (0.7-1.5 s at 1M, which every CLI
// command on Neo4j paid). Every write since the backfill existed gives a
// memory its keyword properties, so nothing can need the backfill once it
// is marked. Uses migration_id.
const (
	kwBackfillID         = "keyword_properties"
	kwBackfillDoneCypher = `
OPTIONAL MATCH (x:Migration {id: $id})
RETURN x IS NOT NULL AS done`
	kwBackfillMarkCypher = `
MERGE (x:Migration {id: $id})
  ON CREATE SET x.name = 'keyword properties backfilled', x.done_at = datetime()`
)

// backfillKeywords gives memories written before keyword properties
// existed those properties, 500 at a time, takes them from erased memories
// an earlier backfill gave them to, then deletes the KeywordGroup nodes of
// the search in Cypher, and marks the database done (kwBackfillID). It
// runs at Open and does nothing on a marked database (TestKeywordBackfill,
// TestKeywordReopenAfterErase, TestKeywordBackfillMark). Upgrade with
// writers stopped: an older mnemo writing after the mark would leave its
// memories out of keyword search.
func (s *Store) backfillKeywords(ctx context.Context) error {
	done, err := read(ctx, s, func(tx txn) (bool, error) {
		recs, err := collect(ctx, tx, kwBackfillDoneCypher, map[string]any{"id": kwBackfillID})
		if err != nil {
			return false, err
		}
		return recs[0].Values[0].(bool), nil
	})
	if err != nil {
		return fmt.Errorf("neo4j: backfill keyword properties: %w", err)
	}
	if done {
		return nil
	}
	for {
		n, err := write(ctx, s, func(tx txn) (int, error) {
			recs, err := collect(ctx, tx, kwMissingCypher, nil)
			if err != nil || len(recs) == 0 {
				return 0, err
			}
			rows := make([]map[string]any, len(recs))
			var stamps kwStamps
			for i, r := range recs {
				p := r.AsMap()
				stamps.add(str(p, "tenant_id"), str(p, "id"))
				props := map[string]any{}
				if erased, _ := p["erased"].(bool); erased {
					props["kw_tf"], props["kw_len"], props["kw_text"], props["kw_group"] = nil, nil, nil, nil // removed
				} else {
					keywordProps(props, str(p, "title"), str(p, "body"), s.stems.Stem)
				}
				rows[i] = map[string]any{"id": str(p, "id"), "props": props}
			}
			if _, err = collect(ctx, tx, kwBackfillCypher, map[string]any{"rows": rows}); err != nil {
				return 0, err
			}
			return len(rows), stampKeywords(ctx, tx, stamps)
		})
		if err != nil {
			return fmt.Errorf("neo4j: backfill keyword properties: %w", err)
		}
		if n == 0 {
			break
		}
	}
	for {
		n, err := write(ctx, s, func(tx txn) (int64, error) {
			recs, err := collect(ctx, tx, kwLegacyCypher, nil)
			if err != nil || len(recs) == 0 {
				return 0, err
			}
			n, _ := recs[0].Get("n")
			return n.(int64), nil
		})
		if err != nil {
			return fmt.Errorf("neo4j: delete keyword groups: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if _, err := write(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, kwBackfillMarkCypher, map[string]any{"id": kwBackfillID})
		return struct{}{}, err
	}); err != nil {
		return fmt.Errorf("neo4j: mark keyword backfill: %w", err)
	}
	return nil
}
