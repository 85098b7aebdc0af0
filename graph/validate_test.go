package graph

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScopeContains(t *testing.T) {
	tests := []struct {
		name    string
		caller  Scope
		record  Scope
		visible bool
	}{
		{"same tenant, tenant-wide caller", Scope{TenantID: "a"}, Scope{TenantID: "a", OrgID: "o", RepoID: "r"}, true},
		{"other tenant", Scope{TenantID: "a"}, Scope{TenantID: "b"}, false},
		{"org caller sees tenant-wide record", Scope{TenantID: "a", OrgID: "o"}, Scope{TenantID: "a"}, true},
		{"org caller sees own org", Scope{TenantID: "a", OrgID: "o"}, Scope{TenantID: "a", OrgID: "o", RepoID: "r"}, true},
		{"org caller does not see other org", Scope{TenantID: "a", OrgID: "o"}, Scope{TenantID: "a", OrgID: "p"}, false},
		{"repo caller sees org-wide record", Scope{TenantID: "a", OrgID: "o", RepoID: "r"}, Scope{TenantID: "a", OrgID: "o"}, true},
		{"repo caller does not see sibling repo", Scope{TenantID: "a", OrgID: "o", RepoID: "r"}, Scope{TenantID: "a", OrgID: "o", RepoID: "s"}, false},
		{"empty caller sees nothing", Scope{}, Scope{TenantID: "a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.visible, tt.caller.Contains(tt.record))
		})
	}
}

func TestFilterValidateReader(t *testing.T) {
	tenant := Scope{TenantID: "t"}
	tests := []struct {
		name   string
		reader Reader
		ok     bool
	}{
		{"no reader", Reader{}, false},
		{"subscopes alone names no user", Reader{Subscopes: true}, false},
		{"a user", Reader{UserID: "u1"}, true},
		{"every user", Reader{AllUsers: true}, true},
		{"the engine", System, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Filter{Scope: tenant, Reader: tt.reader}.Validate()
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "reader", fe.Field)
		})
	}
}

func TestMemoryInputValidate(t *testing.T) {
	good := func() MemoryInput {
		return MemoryInput{
			Memory:  Memory{Scope: Scope{TenantID: "t"}, Type: "note", Title: "x"},
			Version: VersionInput{Content: "hello world", Chunks: []ChunkInput{{Key: "a", Start: 0, End: 5}}},
		}
	}
	tests := []struct {
		name  string
		edit  func(*MemoryInput)
		field string
	}{
		{"missing tenant", func(in *MemoryInput) { in.Memory.Scope.TenantID = "" }, "tenant_id"},
		{"missing type", func(in *MemoryInput) { in.Memory.Type = "" }, "type"},
		{"id with space", func(in *MemoryInput) { in.Memory.ID = "a b" }, "id"},
		{"unknown status", func(in *MemoryInput) { in.Memory.Status = "zombie" }, "status"},
		{"unknown source", func(in *MemoryInput) { in.Memory.SourceKind = "RUMOUR" }, "source_kind"},
		{"unknown visibility", func(in *MemoryInput) { in.Memory.Visibility = "world" }, "visibility"},
		{"importance above 1", func(in *MemoryInput) { in.Memory.Importance = 2 }, "importance"},
		{"empty content", func(in *MemoryInput) { in.Version.Content = "  " }, "content"},
		{"oversize content", func(in *MemoryInput) { in.Version.Content = strings.Repeat("x", MaxContentLen+1) }, "content"},
		{"invalid utf8", func(in *MemoryInput) { in.Version.Content = "bad \xff" }, "content"},
		{"chunk outside content", func(in *MemoryInput) { in.Version.Chunks[0].End = 99 }, "chunks"},
		{"nameless entity", func(in *MemoryInput) { in.Version.Entities = []EntityRef{{Type: "x"}} }, "entities"},
		{"self supersede", func(in *MemoryInput) { in.Memory.ID = "m"; in.Supersedes = "m" }, "supersedes"},
	}
	require.NoError(t, good().Validate())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good()
			tt.edit(&in)
			err := in.Validate()
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalid))
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

func TestNormalizeFillsDefaults(t *testing.T) {
	in := MemoryInput{
		Memory:  Memory{Scope: Scope{TenantID: "t"}, Type: "note"},
		Version: VersionInput{Content: "a  b", Entities: []EntityRef{{Name: "  Kubernetes  Cluster "}}},
	}
	in.Normalize(testTime)
	assert.NotEmpty(t, in.Memory.ID)
	assert.Equal(t, StatusActive, in.Memory.Status)
	assert.Equal(t, SourceAuthored, in.Memory.SourceKind)
	assert.Equal(t, VisibilityUser, in.Memory.Visibility)
	assert.EqualValues(t, 1, in.Memory.AccessCount)
	assert.Equal(t, "kubernetes cluster", in.Version.Entities[0].NormName)
	assert.Equal(t, ContentHash("a b"), in.Version.ContentHash)
}

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
