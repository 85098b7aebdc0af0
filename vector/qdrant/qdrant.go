// Package qdrant is the vector.Index backend on a Qdrant server (gRPC,
// github.com/qdrant/go-client), used when mnemo runs as several replicas:
// the index then lives in Qdrant, not in any process.
//
// One collection holds every tenant's points (cosine distance, dimensions
// from the configuration) with keyword payload indexes on tenant_id (marked
// as the tenant key), org_id, repo_id and type, and an integer index on
// created_at_us; filters are pushed into Qdrant's search. Qdrant point ids
// must be UUIDs or integers, so a memory id maps to the UUIDv5 of the id in
// a fixed namespace, and the original id rides in the payload (memory_id).
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
)

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
}

// Index is a vector.Index on one Qdrant collection. Safe for concurrent use.
type Index struct {
	client *qd.Client
	cfg    Config
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

func clientConfig(cfg Config) (*qd.Config, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: qdrant config: url %q: want scheme://host[:port]", vector.ErrInvalid, cfg.URL)
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
	return nil
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
			return fmt.Errorf("qdrant upsert %d points: %w", len(batch), err)
		}
	}
	return nil
}

// Delete implements vector.Index.
func (x *Index) Delete(ctx context.Context, ids []string) error {
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
		return fmt.Errorf("qdrant delete %d points: %w", len(ids), err)
	}
	return nil
}

// Search implements vector.Index: Qdrant's filtered HNSW search, the filter
// evaluated inside the index.
func (x *Index) Search(ctx context.Context, query []float32, f vector.Filter, k int) ([]vector.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: search: k must be positive, got %d", vector.ErrInvalid, k)
	}
	q, err := x.checkQuery(query, f)
	if err != nil {
		return nil, err
	}
	return x.query(ctx, q, toFilter(f), uint64(k), nil)
}

// Score implements vector.Index: an exact search restricted to the
// candidates' point ids (a HasId condition) within the filter.
func (x *Index) Score(ctx context.Context, query []float32, f vector.Filter, ids []string) ([]vector.Hit, error) {
	q, err := x.checkQuery(query, f)
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
		return nil, fmt.Errorf("qdrant query: %w", err)
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
			return fmt.Errorf("qdrant scroll: %w", err)
		}
		for _, rp := range pts {
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
	if err := f.Validate(); err != nil {
		return 0, err
	}
	n, err := x.client.Count(ctx, &qd.CountPoints{
		CollectionName: x.cfg.Collection,
		Filter:         toFilter(f),
		Exact:          qd.PtrOf(true),
	})
	if err != nil {
		return 0, fmt.Errorf("qdrant count: %w", err)
	}
	return int(n), nil
}

// Close closes the connection; the data stays in Qdrant.
func (x *Index) Close() error {
	return x.client.Close()
}

// DropCollection deletes the collection and everything in it (tests and
// `mnemo doctor --rebuild` use it).
func (x *Index) DropCollection(ctx context.Context) error {
	if err := x.client.DeleteCollection(ctx, x.cfg.Collection); err != nil {
		return fmt.Errorf("drop qdrant collection %s: %w", x.cfg.Collection, err)
	}
	return nil
}

func (x *Index) checkQuery(query []float32, f vector.Filter) ([]float32, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := vector.CheckVector(query, x.cfg.Dimensions); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return vector.Normalize(query), nil
}

// toFilter translates the scope rules: tenant equal; org and repo equal or
// absent on the point (empty values are not stored, so is_empty matches
// them); type one of; created_at_us in [after, before).
func toFilter(f vector.Filter) *qd.Filter {
	must := []*qd.Condition{qd.NewMatchKeyword(keyTenantID, f.TenantID)}
	for _, kv := range []struct{ key, val string }{{keyOrgID, f.OrgID}, {keyRepoID, f.RepoID}} {
		if kv.val == "" {
			continue
		}
		must = append(must, qd.NewFilterAsCondition(&qd.Filter{Should: []*qd.Condition{
			qd.NewMatchKeyword(kv.key, kv.val),
			qd.NewIsEmpty(kv.key),
		}}))
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
	}
	for _, kv := range []struct{ key, val string }{
		{keyVersionID, p.VersionID}, {keyOrgID, p.OrgID}, {keyRepoID, p.RepoID}, {keyType, p.Type},
	} {
		if kv.val != "" {
			m[kv.key] = qd.NewValueString(kv.val)
		}
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
