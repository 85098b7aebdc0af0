// Package qdrant is the vector.Index backend on a Qdrant server (gRPC,
// github.com/qdrant/go-client), used when mnemo runs as several replicas:
// the index then lives in Qdrant, not in any process.
//
// One collection holds every tenant's points (cosine distance, dimensions
// from the configuration) with keyword payload indexes on tenant_id (marked
// as the tenant key), org_id, repo_id, type, user_id, visibility, tags,
// subject_type, subject_id, project_id and session_id, and integer indexes
// on created_at_us and mnemo_format; filters, the access rule included, are
// pushed into Qdrant's search (toFilter). Qdrant point ids must be UUIDs or
// integers, so a memory id maps to the UUIDv5 of the id in a fixed
// namespace, and the original id rides in the payload (memory_id).
//
// Every point carries mnemo_format = 2 and every filter requires it, so a
// point written before the access fields existed is never read as if it
// were public. Open refuses a collection holding such points with
// vector.ErrOldFormat unless Config.DiscardOldFormat (set by `mnemo
// reindex`) asks it to delete them.
//
// Upsert and Delete wait for Qdrant to apply the operation before
// returning. A batch larger than Config.BatchSize is sent in several
// requests; if one fails, the earlier ones stay written, which is safe
// because upserts are idempotent and the engine retries from its outbox.
package qdrant

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	qd "github.com/qdrant/go-client/qdrant"

	"github.com/mnemo-dev/mnemo/vector"
)

// Payload keys, as an operator sees them in the Qdrant dashboard.
const (
	keyMemoryID  = "memory_id"
	keyVersionID = "version_id"
	keyTenantID  = "tenant_id"
	keyOrgID     = "org_id"
	keyRepoID    = "repo_id"
	keyType      = "type"
	keyCreatedAt = "created_at"    // RFC 3339 with nanoseconds, for the round trip
	keyCreatedUS = "created_at_us" // Unix microseconds, for range filters

	keyUserID      = "user_id"
	keyVisibility  = "visibility"
	keyTags        = "tags" // a list of strings
	keySubjectType = "subject_type"
	keySubjectID   = "subject_id"
	keyProjectID   = "project_id"
	keySessionID   = "session_id"
	keyFormat      = "mnemo_format" // payloadFormat on every point this package writes
)

// payloadFormat is the payload layout written by this package: 2 added the
// access and narrowing fields (user_id ... session_id). Points without it
// are refused (Open) and never match a filter (toFilter).
const payloadFormat = 2

// DefaultCollection is the collection name when Config.Collection is empty.
const DefaultCollection = "mnemo_memories"

// DefaultBatchSize is the number of points per upsert request when
// Config.BatchSize is zero.
const DefaultBatchSize = 256

// scrollPage is the page size of Scan.
const scrollPage = 512

// idSpace is the UUIDv5 namespace of memory ids, fixed for good: changing
// it would move every point to a new id.
var idSpace = uuid.MustParse("8b0b6c2e-4f57-5d4e-9a3c-6d6e656d6f31")

// Config locates the server and the collection.
type Config struct {
	// URL is the gRPC endpoint, e.g. "http://localhost:6334" (https means
	// TLS); the port defaults to 6334. Required.
	URL string
	// APIKey is sent with every request when set.
	APIKey string
	// Collection is created on first use; empty means DefaultCollection.
	Collection string
	// Dimensions is the vector length; required. An existing collection
	// with other dimensions is refused.
	Dimensions int
	// BatchSize caps points per upsert request; 0 means DefaultBatchSize.
	BatchSize int
	// DiscardOldFormat deletes, at Open, the points written before
	// payloadFormat instead of refusing the collection. Only a rebuild from
	// the graph (`mnemo reindex`) sets it.
	DiscardOldFormat bool
}

// Index is a vector.Index on one Qdrant collection. Safe for concurrent use.
type Index struct {
	client *qd.Client
	cfg    Config
	closed atomic.Bool
}

var _ vector.Index = (*Index)(nil)

// Open connects, creates the collection and its payload indexes when
// missing, and checks the dimensions of an existing one.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.Dimensions <= 0 {
		return nil, fmt.Errorf("%w: qdrant config: dimensions must be positive", vector.ErrInvalid)
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	qc, err := clientConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := qd.NewClient(qc)
	if err != nil {
		return nil, fmt.Errorf("connect qdrant %s: %w", cfg.URL, err)
	}
	x := &Index{client: client, cfg: cfg}
	if err := x.setup(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return x, nil
}

// CheckURL says whether Open would accept raw as its URL (without
// connecting): the error Open returns for it, or nil. cmd/mnemo's tests
// check the compose file's MNEMO_QDRANT_URL with it.
func CheckURL(raw string) error {
	_, err := clientConfig(Config{URL: raw})
	return err
}

func clientConfig(cfg Config) (*qd.Config, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: qdrant config: url %q: want scheme://host[:port], e.g. http://qdrant:6334 (https for TLS)", vector.ErrInvalid, cfg.URL)
	}
	host, port := u.Hostname(), 6334
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("%w: qdrant config: port %q", vector.ErrInvalid, p)
		}
	}
	return &qd.Config{Host: host, Port: port, APIKey: cfg.APIKey, UseTLS: u.Scheme == "https"}, nil
}

func (x *Index) setup(ctx context.Context) error {
	name := x.cfg.Collection
	exists, err := x.client.CollectionExists(ctx, name)
	if err != nil {
		return fmt.Errorf("qdrant collection %s: %w", name, err)
	}
	if !exists {
		err := x.client.CreateCollection(ctx, &qd.CreateCollection{
			CollectionName: name,
			VectorsConfig: qd.NewVectorsConfig(&qd.VectorParams{
				Size:     uint64(x.cfg.Dimensions),
				Distance: qd.Distance_Cosine,
			}),
		})
		// Another replica may have created it meanwhile; the check below
		// settles that.
		if err != nil {
			if ok, err2 := x.client.CollectionExists(ctx, name); err2 != nil || !ok {
				return fmt.Errorf("create qdrant collection %s: %w", name, err)
			}
		}
	}
	info, err := x.client.GetCollectionInfo(ctx, name)
	if err != nil {
		return fmt.Errorf("qdrant collection %s: %w", name, err)
	}
	if got := info.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize(); got != uint64(x.cfg.Dimensions) {
		return fmt.Errorf("qdrant collection %s has %d dimensions, config says %d", name, got, x.cfg.Dimensions)
	}
	indexes := []struct {
		field  string
		typ    qd.FieldType
		params *qd.PayloadIndexParams
	}{
		{keyTenantID, qd.FieldType_FieldTypeKeyword, qd.NewPayloadIndexParamsKeyword(&qd.KeywordIndexParams{IsTenant: qd.PtrOf(true)})},
		{keyOrgID, qd.FieldType_FieldTypeKeyword, nil},
		{keyRepoID, qd.FieldType_FieldTypeKeyword, nil},
		{keyType, qd.FieldType_FieldTypeKeyword, nil},
		{keyCreatedUS, qd.FieldType_FieldTypeInteger, nil},
		{keyUserID, qd.FieldType_FieldTypeKeyword, nil},
		{keyVisibility, qd.FieldType_FieldTypeKeyword, nil},
		{keyTags, qd.FieldType_FieldTypeKeyword, nil},
		{keySubjectType, qd.FieldType_FieldTypeKeyword, nil},
		{keySubjectID, qd.FieldType_FieldTypeKeyword, nil},
		{keyProjectID, qd.FieldType_FieldTypeKeyword, nil},
		{keySessionID, qd.FieldType_FieldTypeKeyword, nil},
		{keyFormat, qd.FieldType_FieldTypeInteger, nil},
	}
	for _, ix := range indexes {
		if _, ok := info.GetPayloadSchema()[ix.field]; ok {
			continue
		}
		_, err := x.client.CreateFieldIndex(ctx, &qd.CreateFieldIndexCollection{
			CollectionName:   name,
			Wait:             qd.PtrOf(true),
			FieldName:        ix.field,
			FieldType:        qd.PtrOf(ix.typ),
			FieldIndexParams: ix.params,
		})
		if err != nil {
			return fmt.Errorf("qdrant payload index %s.%s: %w", name, ix.field, err)
		}
	}
	return x.checkFormat(ctx)
}

// checkFormat refuses (or, with DiscardOldFormat, deletes) points written
// before payloadFormat: they lack the access fields.
func (x *Index) checkFormat(ctx context.Context) error {
	old := &qd.Filter{MustNot: []*qd.Condition{qd.NewMatchInt(keyFormat, payloadFormat)}}
	n, err := x.client.Count(ctx, &qd.CountPoints{CollectionName: x.cfg.Collection, Filter: old, Exact: qd.PtrOf(true)})
	if err != nil {
		return fmt.Errorf("qdrant collection %s: count old-format points: %w", x.cfg.Collection, err)
	}
	if n == 0 {
		return nil
	}
	if !x.cfg.DiscardOldFormat {
		return fmt.Errorf("%w: qdrant collection %s holds %d points without the owner, visibility, tags, subject, project and session of format %d",
			vector.ErrOldFormat, x.cfg.Collection, n, payloadFormat)
	}
	_, err = x.client.Delete(ctx, &qd.DeletePoints{
		CollectionName: x.cfg.Collection,
		Wait:           qd.PtrOf(true),
		Points:         qd.NewPointsSelectorFilter(old),
	})
	if err != nil {
		return fmt.Errorf("qdrant collection %s: delete %d old-format points: %w", x.cfg.Collection, n, err)
	}
	return nil
}

// begin is the check every call makes first: a cancelled context, then a
// closed index.
func (x *Index) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x.closed.Load() {
		return vector.ErrClosed
	}
	return nil
}

// fail reports a failed request: ctx.Err() when the context ended (gRPC's
// own status does not wrap it), ErrClosed when the index was closed
// meanwhile, else the error with what was being done.
func (x *Index) fail(ctx context.Context, err error, format string, args ...any) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if x.closed.Load() {
		return vector.ErrClosed
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// PointID is the Qdrant point id of a memory id: its UUIDv5 in a fixed
// namespace, the same on every replica and every run.
func PointID(memoryID string) string {
	return uuid.NewSHA1(idSpace, []byte(memoryID)).String()
}

// Dimensions implements vector.Index.
func (x *Index) Dimensions() int { return x.cfg.Dimensions }

// Upsert implements vector.Index.
func (x *Index) Upsert(ctx context.Context, pts []vector.Point) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	if err := vector.ValidateBatch(pts, x.cfg.Dimensions); err != nil {
		return err
	}
	for start := 0; start < len(pts); start += x.cfg.BatchSize {
		batch := pts[start:min(start+x.cfg.BatchSize, len(pts))]
		structs := make([]*qd.PointStruct, len(batch))
		for i, p := range batch {
			structs[i] = &qd.PointStruct{
				Id:      qd.NewID(PointID(p.ID)),
				Vectors: qd.NewVectorsDense(vector.Normalize(p.Vector)),
				Payload: toPayload(p.ID, p.Payload),
			}
		}
		_, err := x.client.Upsert(ctx, &qd.UpsertPoints{
			CollectionName: x.cfg.Collection,
			Wait:           qd.PtrOf(true),
			Points:         structs,
		})
		if err != nil {
			return x.fail(ctx, err, "qdrant upsert %d points", len(batch))
		}
	}
	return nil
}

// Delete implements vector.Index.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	pids := make([]*qd.PointId, len(ids))
	for i, id := range ids {
		if id == "" {
			return fmt.Errorf("%w: delete: empty id", vector.ErrInvalid)
		}
		pids[i] = qd.NewID(PointID(id))
	}
	_, err := x.client.Delete(ctx, &qd.DeletePoints{
		CollectionName: x.cfg.Collection,
		Wait:           qd.PtrOf(true),
		Points:         qd.NewPointsSelectorIDs(pids),
	})
	if err != nil {
		return x.fail(ctx, err, "qdrant delete %d points", len(ids))
	}
	return nil
}

// Search implements vector.Index: Qdrant's filtered HNSW search, the filter
// evaluated inside the index.
func (x *Index) Search(ctx context.Context, query []float32, f vector.Filter, k int) ([]vector.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: search: k must be positive, got %d", vector.ErrInvalid, k)
	}
	q, err := x.checkQuery(ctx, query, f)
	if err != nil {
		return nil, err
	}
	return x.query(ctx, q, toFilter(f), uint64(k), nil)
}

// Score implements vector.Index: an exact search restricted to the
// candidates' point ids (a HasId condition) within the filter.
func (x *Index) Score(ctx context.Context, query []float32, f vector.Filter, ids []string) ([]vector.Hit, error) {
	q, err := x.checkQuery(ctx, query, f)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]struct{}, len(ids))
	var pids []*qd.PointId
	for _, id := range ids {
		if _, dup := seen[id]; dup || id == "" {
			continue
		}
		seen[id] = struct{}{}
		pids = append(pids, qd.NewID(PointID(id)))
	}
	if len(pids) == 0 {
		return []vector.Hit{}, nil
	}
	qf := toFilter(f)
	qf.Must = append(qf.Must, qd.NewHasID(pids...))
	return x.query(ctx, q, qf, uint64(len(pids)), &qd.SearchParams{Exact: qd.PtrOf(true)})
}

func (x *Index) query(ctx context.Context, q []float32, f *qd.Filter, limit uint64, params *qd.SearchParams) ([]vector.Hit, error) {
	res, err := x.client.Query(ctx, &qd.QueryPoints{
		CollectionName: x.cfg.Collection,
		Query:          qd.NewQueryDense(q),
		Filter:         f,
		Params:         params,
		Limit:          qd.PtrOf(limit),
		WithPayload:    qd.NewWithPayload(true),
	})
	if err != nil {
		return nil, x.fail(ctx, err, "qdrant query")
	}
	hits := make([]vector.Hit, 0, len(res))
	for _, sp := range res {
		p, err := fromPayload(sp.GetPayload())
		if err != nil {
			return nil, err
		}
		hits = append(hits, vector.Hit{ID: p.MemoryID, Score: sp.GetScore(), Payload: p})
	}
	vector.SortHits(hits)
	return hits, nil
}

// Scan implements vector.Index by scrolling the filtered collection a page
// at a time.
func (x *Index) Scan(ctx context.Context, f vector.Filter, fn func(vector.Payload) error) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	var offset *qd.PointId
	for {
		pts, next, err := x.client.ScrollAndOffset(ctx, &qd.ScrollPoints{
			CollectionName: x.cfg.Collection,
			Filter:         toFilter(f),
			Offset:         offset,
			Limit:          qd.PtrOf(uint32(scrollPage)),
			WithPayload:    qd.NewWithPayload(true),
		})
		if err != nil {
			return x.fail(ctx, err, "qdrant scroll")
		}
		for _, rp := range pts {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, err := fromPayload(rp.GetPayload())
			if err != nil {
				return err
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		if next == nil || len(pts) == 0 {
			return nil
		}
		offset = next
	}
}

// Count implements vector.Index (an exact count).
func (x *Index) Count(ctx context.Context, f vector.Filter) (int, error) {
	if err := x.begin(ctx); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	n, err := x.client.Count(ctx, &qd.CountPoints{
		CollectionName: x.cfg.Collection,
		Filter:         toFilter(f),
		Exact:          qd.PtrOf(true),
	})
	if err != nil {
		return 0, x.fail(ctx, err, "qdrant count")
	}
	return int(n), nil
}

// Close closes the connection; the data stays in Qdrant. Later calls fail
// with vector.ErrClosed; closing twice is harmless.
func (x *Index) Close() error {
	if x.closed.Swap(true) {
		return nil
	}
	return x.client.Close()
}

// DropCollection deletes the collection and everything in it (tests and
// `mnemo doctor --rebuild` use it).
func (x *Index) DropCollection(ctx context.Context) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	if err := x.client.DeleteCollection(ctx, x.cfg.Collection); err != nil {
		return fmt.Errorf("drop qdrant collection %s: %w", x.cfg.Collection, err)
	}
	return nil
}

func (x *Index) checkQuery(ctx context.Context, query []float32, f vector.Filter) ([]float32, error) {
	if err := x.begin(ctx); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := vector.CheckVector(query, x.cfg.Dimensions); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return vector.Normalize(query), nil
}

// toFilter translates vector.Filter.Match into Qdrant conditions. Empty
// values are not stored (toPayload), so is_empty matches them.
//
//   - tenant equal, and the point written in payloadFormat;
//   - scope: with Subscopes, org and repo each equal or empty on the point
//     when the filter names one; without, the point's scope is the
//     filter's or above it: org empty or equal (empty when the filter's org
//     is empty), and repo empty or (equal, in the filter's org);
//   - users, unless AllUsers: the point has no owner, or its visibility is
//     neither user nor session, or its owner is the reader;
//   - narrowing: user equal, every tag present (one condition per tag),
//     visibility and type one of, subject/project/session equal,
//     created_at_us in [after, before).
func toFilter(f vector.Filter) *qd.Filter {
	must := []*qd.Condition{qd.NewMatchKeyword(keyTenantID, f.TenantID), qd.NewMatchInt(keyFormat, payloadFormat)}
	emptyOr := func(key string, c *qd.Condition) *qd.Condition {
		return qd.NewFilterAsCondition(&qd.Filter{Should: []*qd.Condition{qd.NewIsEmpty(key), c}})
	}
	// equal is key == val, or key empty when val is "".
	equal := func(key, val string) *qd.Condition {
		if val == "" {
			return qd.NewIsEmpty(key)
		}
		return qd.NewMatchKeyword(key, val)
	}
	if f.Subscopes {
		for _, kv := range []struct{ key, val string }{{keyOrgID, f.OrgID}, {keyRepoID, f.RepoID}} {
			if kv.val != "" {
				must = append(must, emptyOr(kv.key, qd.NewMatchKeyword(kv.key, kv.val)))
			}
		}
	} else {
		if f.OrgID == "" {
			must = append(must, qd.NewIsEmpty(keyOrgID))
		} else {
			must = append(must, emptyOr(keyOrgID, qd.NewMatchKeyword(keyOrgID, f.OrgID)))
		}
		if f.RepoID == "" {
			must = append(must, qd.NewIsEmpty(keyRepoID))
		} else {
			must = append(must, emptyOr(keyRepoID, qd.NewFilterAsCondition(&qd.Filter{Must: []*qd.Condition{
				qd.NewMatchKeyword(keyRepoID, f.RepoID), equal(keyOrgID, f.OrgID),
			}})))
		}
	}
	if !f.AllUsers {
		readable := []*qd.Condition{
			qd.NewIsEmpty(keyUserID),
			qd.NewFilterAsCondition(&qd.Filter{MustNot: []*qd.Condition{
				qd.NewMatchKeywords(keyVisibility, vector.VisibilityUser, vector.VisibilitySession),
			}}),
		}
		if f.ReaderUserID != "" {
			readable = append(readable, qd.NewMatchKeyword(keyUserID, f.ReaderUserID))
		}
		must = append(must, qd.NewFilterAsCondition(&qd.Filter{Should: readable}))
	}
	for _, kv := range []struct{ key, val string }{
		{keyUserID, f.UserID}, {keySubjectType, f.SubjectType}, {keySubjectID, f.SubjectID},
		{keyProjectID, f.ProjectID}, {keySessionID, f.SessionID},
	} {
		if kv.val != "" {
			must = append(must, qd.NewMatchKeyword(kv.key, kv.val))
		}
	}
	for _, t := range f.Tags {
		must = append(must, qd.NewMatchKeyword(keyTags, t))
	}
	if len(f.Visibility) > 0 {
		must = append(must, qd.NewMatchKeywords(keyVisibility, f.Visibility...))
	}
	if len(f.Types) > 0 {
		must = append(must, qd.NewMatchKeywords(keyType, f.Types...))
	}
	if !f.CreatedAfter.IsZero() || !f.CreatedBefore.IsZero() {
		r := &qd.Range{}
		if !f.CreatedAfter.IsZero() {
			r.Gte = qd.PtrOf(float64(ceilMicros(f.CreatedAfter)))
		}
		if !f.CreatedBefore.IsZero() {
			r.Lt = qd.PtrOf(float64(ceilMicros(f.CreatedBefore)))
		}
		must = append(must, qd.NewRange(keyCreatedUS, r))
	}
	return &qd.Filter{Must: must}
}

// ceilMicros rounds t up to a whole microsecond, the precision of the range
// index, so that [after, before) keeps its meaning for stored (truncated)
// times.
func ceilMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Sub(time.UnixMicro(us)) > 0 {
		us++
	}
	return us
}

func toPayload(id string, p vector.Payload) map[string]*qd.Value {
	m := map[string]*qd.Value{
		keyMemoryID: qd.NewValueString(id),
		keyTenantID: qd.NewValueString(p.TenantID),
		keyFormat:   qd.NewValueInt(payloadFormat),
	}
	for _, kv := range []struct{ key, val string }{
		{keyVersionID, p.VersionID}, {keyOrgID, p.OrgID}, {keyRepoID, p.RepoID}, {keyType, p.Type},
		{keyUserID, p.UserID}, {keyVisibility, p.Visibility}, {keySubjectType, p.SubjectType},
		{keySubjectID, p.SubjectID}, {keyProjectID, p.ProjectID}, {keySessionID, p.SessionID},
	} {
		if kv.val != "" {
			m[kv.key] = qd.NewValueString(kv.val)
		}
	}
	if len(p.Tags) > 0 {
		tags := make([]*qd.Value, len(p.Tags))
		for i, t := range p.Tags {
			tags[i] = qd.NewValueString(t)
		}
		m[keyTags] = qd.NewValueFromList(tags...)
	}
	if !p.CreatedAt.IsZero() {
		m[keyCreatedAt] = qd.NewValueString(p.CreatedAt.UTC().Format(time.RFC3339Nano))
		m[keyCreatedUS] = qd.NewValueInt(p.CreatedAt.UnixMicro())
	}
	return m
}

// errPayload reports a point whose payload was not written by this package.
var errPayload = errors.New("qdrant point without a mnemo payload")

func fromPayload(m map[string]*qd.Value) (vector.Payload, error) {
	p := vector.Payload{
		MemoryID:  m[keyMemoryID].GetStringValue(),
		VersionID: m[keyVersionID].GetStringValue(),
		TenantID:  m[keyTenantID].GetStringValue(),
		OrgID:     m[keyOrgID].GetStringValue(),
		RepoID:    m[keyRepoID].GetStringValue(),
		Type:      m[keyType].GetStringValue(),

		UserID:      m[keyUserID].GetStringValue(),
		Visibility:  m[keyVisibility].GetStringValue(),
		SubjectType: m[keySubjectType].GetStringValue(),
		SubjectID:   m[keySubjectID].GetStringValue(),
		ProjectID:   m[keyProjectID].GetStringValue(),
		SessionID:   m[keySessionID].GetStringValue(),
	}
	for _, v := range m[keyTags].GetListValue().GetValues() {
		p.Tags = append(p.Tags, v.GetStringValue())
	}
	if p.MemoryID == "" || p.TenantID == "" {
		return p, errPayload
	}
	if s := m[keyCreatedAt].GetStringValue(); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return p, fmt.Errorf("qdrant point %s: created_at: %w", p.MemoryID, err)
		}
		p.CreatedAt = t
	}
	return p, nil
}
