// Package accesstest is the property test of mnemo's access rule: random
// principals (tenants, orgs, repos, users, roles) make random writes and
// then random reads through every read path, and every record a read
// returns is checked against the rule computed from the principal alone
// (graph.Filter.Admits over the principal's scope and reader). The engine
// tests run it in process; the server tests run it over HTTP. Both run it
// on every graph backend (graph/graphtest).
//
// The world it writes (principals are drawn first, so a server can be
// given their keys):
//
//	tenants ta, tb; orgs o1, o2; repos r1, r2 (repo only inside an org)
//	principals p00..pNN: one scope each (tenant, org or repo level), one
//	  base role (reader, writer, librarian, admin) plus any of auditor
//	  (read_all_users), deep (subscopes), delegate (act_as_user), and a
//	  user (the key's fifth field: u1..u4, or none: the principal id)
//	writes: notes naming shared entities (PostgreSQL, Kafka, ...) with a
//	  random visibility, owner and scope; decisions, which the gate queues
//	  and random librarians try to approve
package accesstest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Extra roles the world's principals hold beside the default policy's.
const (
	RoleAuditor  = "auditor"  // read_all_users
	RoleDeep     = "deep"     // subscopes
	RoleDelegate = "delegate" // act_as_user
)

// Roles adds the extra roles to p (the default policy plus these is the
// policy the world runs under).
func Roles(p *policy.Policy) {
	p.Roles[RoleAuditor] = []string{policy.PermReadAllUsers}
	p.Roles[RoleDeep] = []string{policy.PermSubscopes}
	p.Roles[RoleDelegate] = []string{policy.PermActAsUser}
}

// perms is the reference of what each role grants, written out here rather
// than asked of the policy, so that a policy bug shows as a leak.
var perms = map[string][]string{
	"reader":     {policy.PermRead},
	"writer":     {policy.PermRead, policy.PermWrite},
	"librarian":  {policy.PermRead, policy.PermWrite, policy.PermApprove, policy.PermAuditRead},
	"admin":      {policy.PermRead, policy.PermWrite, policy.PermApprove, policy.PermReadAllUsers, policy.PermSubscopes, policy.PermActAsUser, policy.PermAuditRead, policy.PermErase},
	RoleAuditor:  {policy.PermReadAllUsers},
	RoleDeep:     {policy.PermSubscopes},
	RoleDelegate: {policy.PermActAsUser},
}

func may(p graph.Principal, perm string) bool {
	for _, r := range p.Roles {
		if slices.Contains(perms[r], perm) {
			return true
		}
	}
	return false
}

// readerOf is the reference reader of p.
func readerOf(p graph.Principal) graph.Reader {
	user := p.UserID
	if user == "" {
		user = p.ID
	}
	return graph.Reader{UserID: user, AllUsers: may(p, policy.PermReadAllUsers), Subscopes: may(p, policy.PermSubscopes)}
}

// Client is one way into mnemo, acting as the principal it is given: the
// engine in process, or the HTTP API with that principal's key. Errors wrap
// graph.ErrNotFound and graph.ErrForbidden where mnemo answered so.
type Client interface {
	Ingest(ctx context.Context, p graph.Principal, r engine.IngestRequest) (engine.IngestResult, error)
	Get(ctx context.Context, p graph.Principal, id string) (graph.Memory, error)
	List(ctx context.Context, p graph.Principal, r engine.ListRequest) ([]graph.Memory, error)
	Search(ctx context.Context, p graph.Principal, r engine.SearchRequest) (engine.SearchResponse, error)
	ReadContext(ctx context.Context, p graph.Principal, r engine.ContextRequest) (engine.ContextResponse, error)
	Verify(ctx context.Context, p graph.Principal, r engine.VerifyRequest) (engine.VerifyResponse, error)
	GateRequests(ctx context.Context, p graph.Principal) ([]graph.GateRequest, error)
	GateRequest(ctx context.Context, p graph.Principal, id string) (graph.GateRequest, error)
	Approve(ctx context.Context, p graph.Principal, id string) (engine.Decision, error)
	Audit(ctx context.Context, p graph.Principal, r engine.AuditRequest) ([]graph.AuditEvent, error)
}

// Config sizes a run. Zero fields take the defaults in parentheses.
type Config struct {
	Seed       uint64
	Principals int // (24)
	Writes     int // (160)
	Reads      int // (3000; MNEMO_PROPERTY_READS overrides)
}

// Stats is what a run did and found.
type Stats struct {
	Reads   int // read calls made
	Records int // records those reads returned, each checked
	Leaks   int // records returned that the principal may not read
	// Denied counts direct fetches (get) of an active memory the rule lets
	// the principal read that answered not found: the rule applied too
	// strictly.
	Denied int
	// Writes made, and writes refused as the rule says (403) or let
	// through although the rule refuses them (WriteLeaks).
	Writes, Refused, WriteLeaks int
	// Approvals made by librarians, and approvals of requests outside
	// the librarian's reach that went through (counted in Leaks too).
	Approvals int
	ByPath    map[string]int // reads per path
}

func (s Stats) String() string {
	paths := make([]string, 0, len(s.ByPath))
	for _, k := range slices.Sorted(maps.Keys(s.ByPath)) {
		paths = append(paths, fmt.Sprintf("%s=%d", k, s.ByPath[k]))
	}
	return fmt.Sprintf("reads %d (%s), records checked %d, leaks %d, denied %d; writes %d, refused %d, write leaks %d, approvals %d",
		s.Reads, strings.Join(paths, " "), s.Records, s.Leaks, s.Denied, s.Writes, s.Refused, s.WriteLeaks, s.Approvals)
}

// World is the random principals of one run and what they wrote.
type World struct {
	cfg        Config
	rng        *rand.Rand
	Principals []graph.Principal
	mems       map[string]graph.Memory // id -> owner, scope, visibility, status as written
	ids        []string
	requests   map[string]queued // gate request id -> the queued write
	reqIDs     []string
	contexts   []engine.ContextResponse
	stats      Stats
	t          testing.TB
	reported   int // failure messages written; the rest are only counted
}

// maxReports caps the failure messages of one run.
const maxReports = 25

// errorf reports one failure, the first maxReports in full.
func (w *World) errorf(format string, args ...any) {
	w.t.Helper()
	if w.reported++; w.reported <= maxReports {
		w.t.Errorf("accesstest: "+format, args...)
	}
}

type queued struct {
	author graph.Principal
	mem    graph.Memory // what the approved write becomes
}

// NewWorld draws the principals of a run.
func NewWorld(t testing.TB, cfg Config) *World {
	t.Helper()
	if cfg.Principals == 0 {
		cfg.Principals = 24
	}
	if cfg.Writes == 0 {
		cfg.Writes = 160
	}
	if cfg.Reads == 0 {
		cfg.Reads = 3000
	}
	if v := os.Getenv("MNEMO_PROPERTY_READS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("MNEMO_PROPERTY_READS=%q: want a positive number", v)
		}
		cfg.Reads = n
	}
	w := &World{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6d6e656d6f)), mems: map[string]graph.Memory{},
		requests: map[string]queued{}, stats: Stats{ByPath: map[string]int{}}, t: t}
	for i := range cfg.Principals {
		w.Principals = append(w.Principals, w.principal(i))
	}
	return w
}

var (
	tenants = []string{"ta", "tb"}
	orgs    = []string{"o1", "o2"}
	repos   = []string{"r1", "r2"}
	users   = []string{"u1", "u2", "u3", "u4"}
	topics  = []string{"PostgreSQL", "Kafka", "Redis", "Grafana", "Terraform", "Kubernetes"}
)

func (w *World) pick(xs []string) string { return xs[w.rng.IntN(len(xs))] }
func (w *World) chance(p float64) bool   { return w.rng.Float64() < p }

func (w *World) principal(i int) graph.Principal {
	s := graph.Scope{TenantID: w.pick(tenants)}
	switch w.rng.IntN(3) {
	case 1:
		s.OrgID = w.pick(orgs)
	case 2:
		s.OrgID, s.RepoID = w.pick(orgs), w.pick(repos)
	}
	base := []string{"reader", "writer", "writer", "librarian", "admin"}
	roles := []string{w.pick(base)}
	for _, extra := range []string{RoleAuditor, RoleDeep, RoleDelegate} {
		if w.chance(0.25) {
			roles = append(roles, extra)
		}
	}
	p := graph.Principal{ID: fmt.Sprintf("p%02d", i), Roles: roles, Scope: s}
	if w.chance(0.5) {
		p.UserID = w.pick(users)
	}
	return p
}

// user is the user p acts as.
func user(p graph.Principal) string { return readerOf(p).UserID }

// Keys writes the world's principals as an API key list for the server:
// key:principal:roles:tenant[/org[/repo]][:user], comma-separated, with
// key "access-key-" + principal id.
func (w *World) Keys() string {
	var out []string
	for _, p := range w.Principals {
		s := p.Scope.TenantID
		if p.Scope.OrgID != "" {
			s += "/" + p.Scope.OrgID
		}
		if p.Scope.RepoID != "" {
			s += "/" + p.Scope.RepoID
		}
		k := fmt.Sprintf("%s:%s:%s:%s", Key(p), p.ID, strings.Join(p.Roles, "|"), s)
		if p.UserID != "" {
			k += ":" + p.UserID
		}
		out = append(out, k)
	}
	return strings.Join(out, ",")
}

// Key is p's API key in Keys.
func Key(p graph.Principal) string { return "access-key-" + p.ID }

// Run makes the world's writes and then its reads through c, checks every
// record read, and fails t on any leak. It returns what it did.
func (w *World) Run(ctx context.Context, c Client) Stats {
	w.t.Helper()
	for range w.cfg.Writes {
		w.write(ctx, c)
	}
	if len(w.ids) == 0 {
		w.t.Fatalf("accesstest: no write went through: %s", w.stats)
	}
	for w.stats.Reads < w.cfg.Reads {
		w.read(ctx, c)
	}
	if w.stats.Records < w.stats.Reads/4 {
		w.t.Errorf("accesstest: reads returned too few records to prove anything: %s", w.stats)
	}
	if w.stats.Leaks > 0 || w.stats.WriteLeaks > 0 || w.stats.Denied > 0 {
		w.t.Errorf("accesstest: %s (%d failures, the first %d shown)", w.stats, w.reported, min(w.reported, maxReports))
	}
	return w.stats
}

// narrower returns a scope strictly beneath s, or false when s is a repo.
func (w *World) narrower(s graph.Scope) (graph.Scope, bool) {
	switch {
	case s.OrgID == "":
		s.OrgID = w.pick(orgs)
		if w.chance(0.5) {
			s.RepoID = w.pick(repos)
		}
	case s.RepoID == "":
		s.RepoID = w.pick(repos)
	default:
		return s, false
	}
	return s, true
}

var visibilities = []graph.Visibility{"", graph.VisibilityUser, graph.VisibilitySession, graph.VisibilityProject, graph.VisibilityGlobal}

func (w *World) write(ctx context.Context, c Client) {
	w.t.Helper()
	var writers []graph.Principal
	for _, p := range w.Principals {
		if may(p, policy.PermWrite) {
			writers = append(writers, p)
		}
	}
	if len(writers) == 0 {
		w.t.Fatal("accesstest: no principal may write")
	}
	p := writers[w.rng.IntN(len(writers))]
	topic := w.pick(topics)
	r := engine.IngestRequest{Type: "note", Visibility: visibilities[w.rng.IntN(len(visibilities))]}
	switch w.rng.IntN(4) {
	case 0:
		r.Content = fmt.Sprintf("%s note content %d", topic, w.rng.IntN(1000))
	case 1:
		r.Content = fmt.Sprintf("The %s cluster runs on host %d and talks to %s.", topic, w.rng.IntN(50), w.pick(topics))
	case 2:
		r.Content = fmt.Sprintf("Remember that %s backups run nightly.", topic)
	default:
		r.Type = "" // a decision: the gate queues it for a librarian
		r.Content = fmt.Sprintf("We decided to use %s for billing %d.", topic, w.rng.IntN(1000))
	}
	s := p.Scope
	forbidden := false
	if w.chance(0.25) {
		if n, ok := w.narrower(p.Scope); ok {
			s, r.Scope = n, &n
			forbidden = forbidden || !may(p, policy.PermSubscopes)
		}
	}
	owner := user(p)
	switch x := w.rng.IntN(10); {
	case x < 2:
		r.UserID = owner
	case x < 4:
		r.UserID = w.pick(append(slices.Clone(users), w.Principals[w.rng.IntN(len(w.Principals))].ID))
		owner = r.UserID
		forbidden = forbidden || (owner != user(p) && !may(p, policy.PermActAsUser))
	}
	res, err := c.Ingest(ctx, p, r)
	w.stats.Writes++
	switch {
	case forbidden && errors.Is(err, graph.ErrForbidden):
		w.stats.Refused++
		return
	case forbidden:
		w.stats.WriteLeaks++
		w.errorf("%s wrote %+v as %q in %v, which the rule refuses: %v, %+v", p.ID, r, owner, s, err, res)
		return
	case err != nil:
		w.t.Fatalf("accesstest: %s writes %+v: %v", p.ID, r, err)
	}
	m := graph.Memory{ID: res.ID, Scope: s, UserID: owner, Visibility: r.Visibility, Status: graph.StatusActive}
	if m.Visibility == "" {
		m.Visibility = graph.VisibilityUser
	}
	switch res.Status {
	case engine.StatusApproved, engine.StatusSuperseded:
		w.add(m, res.Supersedes)
	case engine.StatusPending:
		w.requests[res.RequestID] = queued{author: p, mem: m}
		w.reqIDs = append(w.reqIDs, res.RequestID)
		w.approve(ctx, c, res.RequestID)
	}
}

// add records a memory written, and the one it superseded.
func (w *World) add(m graph.Memory, supersedes string) {
	if _, ok := w.mems[m.ID]; !ok {
		w.ids = append(w.ids, m.ID)
	}
	w.mems[m.ID] = m
	if old, ok := w.mems[supersedes]; ok {
		old.Status = graph.StatusSuperseded
		w.mems[supersedes] = old
	}
}

// approverReaches is the reference of which queued writes p may see and
// decide: its own scope's, and beneath it with subscopes.
func approverReaches(p graph.Principal, g graph.Scope) bool {
	return g == p.Scope || (p.Scope.Contains(g) && may(p, policy.PermSubscopes))
}

// approve has a random principal that may approve try to approve id.
func (w *World) approve(ctx context.Context, c Client, id string) {
	w.t.Helper()
	var libs []graph.Principal
	for _, p := range w.Principals {
		if may(p, policy.PermApprove) {
			libs = append(libs, p)
		}
	}
	q := w.requests[id]
	if near := slices.DeleteFunc(slices.Clone(libs), func(p graph.Principal) bool {
		return p.Scope.TenantID != q.mem.Scope.TenantID
	}); len(near) > 0 && w.chance(0.8) {
		libs = near // mostly the request's own tenant, where reach is decided by org and repo
	}
	if len(libs) == 0 || w.chance(0.3) {
		return
	}
	p := libs[w.rng.IntN(len(libs))]
	d, err := c.Approve(ctx, p, id)
	reach := approverReaches(p, q.mem.Scope)
	switch {
	case !reach && err == nil:
		w.stats.Leaks++
		w.errorf("librarian %s (%v) approved request %s in %v", p.ID, p.Scope, id, q.mem.Scope)
	case !reach && !errors.Is(err, graph.ErrNotFound):
		w.t.Fatalf("accesstest: librarian %s approves %s outside its reach: %v, want not found", p.ID, id, err)
	case reach && err != nil:
		w.t.Fatalf("accesstest: librarian %s approves %s: %v", p.ID, id, err)
	}
	if err == nil && d.Result != nil {
		w.stats.Approvals++
		m := q.mem
		m.ID = d.Result.ID
		if d.Result.Status == engine.StatusApproved || d.Result.Status == engine.StatusSuperseded {
			w.add(m, d.Result.Supersedes)
		}
	}
}

// check counts one returned record and reports whether f's reference rule
// admits it.
func (w *World) check(path string, p graph.Principal, f graph.Filter, id string) {
	w.t.Helper()
	w.stats.Records++
	m, ok := w.mems[id]
	if !ok {
		w.stats.Leaks++
		w.errorf("%s by %s returned %s, a memory no write made", path, p.ID, id)
		return
	}
	if !f.Admits(m) {
		w.stats.Leaks++
		w.errorf("%s by %s (user %s, scope %v, roles %v) returned %s (user %s, visibility %s, scope %v)",
			path, p.ID, f.Reader.UserID, f.Scope, p.Roles, id, m.UserID, m.Visibility, m.Scope)
	}
}

// filter is the reference filter of a read by p, in scope s when not nil
// (its empty fields are p's: a request cannot name a wider scope).
func filter(p graph.Principal, s *graph.Scope) graph.Filter {
	f := graph.Filter{Scope: p.Scope, Reader: readerOf(p)}
	if s != nil && *s != (graph.Scope{}) {
		f.Scope = *s
		if f.Scope.TenantID == "" {
			f.Scope.TenantID = p.Scope.TenantID
		}
		if f.Scope.OrgID == "" {
			f.Scope.OrgID = p.Scope.OrgID
		}
		if f.Scope.RepoID == "" {
			f.Scope.RepoID = p.Scope.RepoID
		}
	}
	return f
}

// readScope picks the scope a read names: none mostly, else a narrower
// one when p may (a forbidden narrowing is the write test's business).
func (w *World) readScope(p graph.Principal) *graph.Scope {
	if !may(p, policy.PermSubscopes) || !w.chance(0.3) {
		return nil
	}
	if n, ok := w.narrower(p.Scope); ok {
		return &n
	}
	return nil
}

var modes = []string{policy.ModeGraph, policy.ModeKeyword, policy.ModeVector, policy.ModeHybrid}

func (w *World) query() string {
	switch w.rng.IntN(3) {
	case 0:
		return w.pick(topics) + " note content"
	case 1:
		return w.pick(topics) + " cluster host " + w.pick(topics)
	default:
		return "backups " + w.pick(topics)
	}
}

func (w *World) read(ctx context.Context, c Client) {
	w.t.Helper()
	p := w.Principals[w.rng.IntN(len(w.Principals))]
	path := []string{"get", "list", "search", "search", "search", "context", "context", "verify", "librarian", "audit"}[w.rng.IntN(10)]
	w.stats.Reads++
	w.stats.ByPath[path]++
	fail := func(err error) {
		w.t.Helper()
		w.t.Fatalf("accesstest: %s by %s: %v", path, p.ID, err)
	}
	switch path {
	case "get":
		id := w.ids[w.rng.IntN(len(w.ids))]
		got, err := c.Get(ctx, p, id)
		f := filter(p, nil)
		switch {
		case errors.Is(err, graph.ErrNotFound):
			if m := w.mems[id]; f.Admits(m) && m.Status == graph.StatusActive {
				w.stats.Denied++
				w.errorf("get by %s (user %s, scope %v, roles %v) of %s (user %s, visibility %s, scope %v): not found, but the rule admits it",
					p.ID, f.Reader.UserID, f.Scope, p.Roles, id, m.UserID, m.Visibility, m.Scope)
			}
		case err != nil:
			fail(err)
		default:
			w.check(path, p, f, got.ID)
		}
	case "list":
		r := engine.ListRequest{Scope: w.readScope(p), Limit: 100}
		if w.chance(0.4) {
			r.UserID = w.pick(users)
		}
		ms, err := c.List(ctx, p, r)
		if err != nil {
			fail(err)
		}
		for _, m := range ms {
			w.check(path, p, filter(p, r.Scope), m.ID)
		}
	case "search":
		r := engine.SearchRequest{Scope: w.readScope(p), Query: w.query(), Mode: modes[w.rng.IntN(len(modes))], Limit: 20}
		if w.chance(0.2) {
			r.UserID = w.pick(users)
		}
		res, err := c.Search(ctx, p, r)
		if err != nil {
			fail(err)
		}
		w.stats.ByPath["search:"+r.Mode]++
		for _, x := range res.Results {
			w.check(path+" "+r.Mode, p, filter(p, r.Scope), x.Memory.ID)
			for _, n := range x.Neighbours {
				w.check(path+" "+r.Mode+" neighbour", p, filter(p, r.Scope), n.ID)
			}
		}
	case "context":
		r := engine.ContextRequest{Scope: w.readScope(p)}
		if w.chance(0.5) {
			r.Query = w.query()
		} else {
			r.ElementID = w.ids[w.rng.IntN(len(w.ids))]
		}
		res, err := c.ReadContext(ctx, p, r)
		if errors.Is(err, graph.ErrNotFound) && r.ElementID != "" {
			return
		}
		if err != nil {
			fail(err)
		}
		for _, it := range res.Items {
			w.check(path, p, filter(p, r.Scope), it.ElementID)
		}
		if len(res.Items) > 0 {
			w.contexts = append(w.contexts, res)
		}
	case "verify":
		if len(w.contexts) == 0 {
			return
		}
		rc := w.contexts[w.rng.IntN(len(w.contexts))]
		var cs []graph.Citation
		for _, it := range rc.Items {
			cs = append(cs, it.Citations...)
		}
		_, err := c.Verify(ctx, p, engine.VerifyRequest{Scope: &rc.Scope, ContextID: rc.ContextID, Citations: cs})
		switch {
		case errors.Is(err, graph.ErrNotFound), errors.Is(err, graph.ErrForbidden):
		case err != nil:
			fail(err)
		default:
			// Verifying tells what the context held: each element is read.
			s := rc.Scope
			for _, it := range rc.Items {
				w.check(path, p, filter(p, &s), it.ElementID)
			}
		}
	case "librarian":
		w.readQueue(ctx, c, p)
	case "audit":
		w.readAudit(ctx, c, p)
	}
}

// readAudit lists audit events as p, all of its scope or one memory's, and
// checks every event about a memory is about one p may read; without
// audit_read it must be refused.
func (w *World) readAudit(ctx context.Context, c Client, p graph.Principal) {
	w.t.Helper()
	r := engine.AuditRequest{Limit: 500}
	if w.chance(0.5) {
		r.MemoryID = w.ids[w.rng.IntN(len(w.ids))]
	}
	evs, err := c.Audit(ctx, p, r)
	f := filter(p, nil)
	switch {
	case !may(p, policy.PermAuditRead):
		if !errors.Is(err, graph.ErrForbidden) {
			w.stats.Leaks++
			w.errorf("audit by %s (roles %v) without audit_read: %v, want forbidden", p.ID, p.Roles, err)
		}
		return
	case errors.Is(err, graph.ErrNotFound) && r.MemoryID != "":
		if f.Admits(w.mems[r.MemoryID]) {
			w.stats.Denied++
			w.errorf("audit by %s of %s: not found, but the rule admits it", p.ID, r.MemoryID)
		}
		return
	case err != nil:
		w.t.Fatalf("accesstest: audit by %s: %v", p.ID, err)
	}
	for _, ev := range evs {
		if ev.SubjectKind == "Memory" {
			w.check("audit", p, f, ev.SubjectID)
		}
	}
}

// readQueue lists or shows queued writes as p and checks each is p's own
// or in its reach as an approver.
func (w *World) readQueue(ctx context.Context, c Client, p graph.Principal) {
	w.t.Helper()
	checkReq := func(g graph.GateRequest) {
		w.stats.Records++
		q, ok := w.requests[g.ID]
		if !ok || (q.author.ID != p.ID && !(may(p, policy.PermApprove) && approverReaches(p, q.mem.Scope))) {
			w.stats.Leaks++
			w.errorf("librarian read by %s (%v, roles %v) returned request %s of %s in %v", p.ID, p.Scope, p.Roles, g.ID, q.author.ID, q.mem.Scope)
		}
	}
	if may(p, policy.PermApprove) && w.chance(0.5) {
		reqs, err := c.GateRequests(ctx, p)
		if err != nil {
			w.t.Fatalf("accesstest: list gate requests by %s: %v", p.ID, err)
		}
		for _, g := range reqs {
			checkReq(g)
		}
		return
	}
	if len(w.reqIDs) == 0 {
		return
	}
	g, err := c.GateRequest(ctx, p, w.reqIDs[w.rng.IntN(len(w.reqIDs))])
	switch {
	case errors.Is(err, graph.ErrNotFound):
	case err != nil:
		w.t.Fatalf("accesstest: show gate request by %s: %v", p.ID, err)
	default:
		checkReq(g)
	}
}
