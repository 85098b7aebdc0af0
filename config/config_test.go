package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mnemo.yaml")
	require.NoError(t, os.WriteFile(file, []byte("listen: 127.0.0.1:7000\nstore: neo4j\ndata_dir: /from-file\nlog_level: warn\n"), 0o600))
	timeouts := filepath.Join(t.TempDir(), "timeouts.yaml")
	require.NoError(t, os.WriteFile(timeouts, []byte("read_timeout: 5s\n"), 0o600))

	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c Config) {
			assert.Equal(t, Defaults(), c)
		}},
		{"file over defaults", []string{"--config", file}, nil, func(t *testing.T, c Config) {
			assert.Equal(t, "127.0.0.1:7000", c.Listen)
			assert.Equal(t, "neo4j", c.Store)
			assert.Equal(t, "warn", c.LogLevel)
		}},
		{"index bound from the env", nil, map[string]string{"MNEMO_NEO4J_INDEX_MEMORIES": "-1"}, func(t *testing.T, c Config) {
			assert.Equal(t, int64(-1), c.Neo4j.IndexMemories)
		}},
		{"env over file", []string{"--config", file}, map[string]string{"MNEMO_LISTEN": ":9000"}, func(t *testing.T, c Config) {
			assert.Equal(t, ":9000", c.Listen)
			assert.Equal(t, "/from-file", c.DataDir)
		}},
		{"flag over env", []string{"--config", file, "--listen", ":9100"}, map[string]string{"MNEMO_LISTEN": ":9000"}, func(t *testing.T, c Config) {
			assert.Equal(t, ":9100", c.Listen)
		}},
		{"config file from env", nil, map[string]string{"MNEMO_CONFIG": file}, func(t *testing.T, c Config) {
			assert.Equal(t, "neo4j", c.Store)
		}},
		{"api keys from env", nil, map[string]string{"MNEMO_API_KEYS": "secret-key-1:alice:admin|writer:acme/eng/api"}, func(t *testing.T, c Config) {
			require.Len(t, c.APIKeys, 1)
			assert.Equal(t, APIKey{Key: "secret-key-1", Principal: "alice", Roles: []string{"admin", "writer"}, Tenant: "acme", Org: "eng", Repo: "api"}, c.APIKeys[0])
		}},
		{"api key with a user", nil, map[string]string{"MNEMO_API_KEYS": "secret-key-1:agent-7:writer:acme:alice, secret-key-2:bob:reader:acme/eng"}, func(t *testing.T, c Config) {
			require.Len(t, c.APIKeys, 2)
			assert.Equal(t, APIKey{Key: "secret-key-1", Principal: "agent-7", Roles: []string{"writer"}, Tenant: "acme", User: "alice"}, c.APIKeys[0])
			assert.Equal(t, APIKey{Key: "secret-key-2", Principal: "bob", Roles: []string{"reader"}, Tenant: "acme", Org: "eng"}, c.APIKeys[1])
		}},
		{"int setting", []string{"--max-body-bytes", "1024"}, nil, func(t *testing.T, c Config) {
			assert.EqualValues(t, 1024, c.MaxBodyBytes)
		}},
		{"timeouts", []string{"--config", timeouts, "--write-timeout", "2m"}, map[string]string{"MNEMO_REQUEST_TIMEOUT": "10s"}, func(t *testing.T, c Config) {
			assert.Equal(t, 5*time.Second, c.ReadTimeout, "from the file")
			assert.Equal(t, 10*time.Second, c.RequestTimeout, "from the environment")
			assert.Equal(t, 2*time.Minute, c.WriteTimeout, "from the flag")
			assert.Equal(t, Defaults().IdleTimeout, c.IdleTimeout)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Load("mnemo", tt.args, envOf(tt.env))
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestLoadErrorsNameTheField(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("listn: x\n"), 0o600))
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		field string
	}{
		{"unknown store", []string{"--store", "mysql"}, nil, "store"},
		{"bad vector", nil, map[string]string{"MNEMO_VECTOR": "faiss"}, "vector.backend"},
		{"qdrant without url", []string{"--vector", "qdrant"}, nil, "vector.qdrant_url"},
		{"neo4j vectors without a uri", []string{"--vector", "neo4j", "--neo4j-uri", ""}, nil, "neo4j.uri"},
		{"short key", []string{"--api-keys", "k:alice:admin:acme"}, nil, "api_keys[0].key"},
		{"malformed key", []string{"--api-keys", "secretkey:alice"}, nil, "api_keys"},
		{"key with six fields", []string{"--api-keys", "secretkey:alice:admin:acme:alice:x"}, nil, "api_keys"},
		{"key with an empty user", []string{"--api-keys", "secretkey:alice:admin:acme:"}, nil, "api_keys"},
		{"index bound below -1", []string{"--neo4j-index-memories", "-2"}, nil, "neo4j.index_memories"},
		{"bad number", nil, map[string]string{"MNEMO_MAX_BODY_BYTES": "lots"}, "MNEMO_MAX_BODY_BYTES"},
		{"bad level", []string{"--log-level", "loud"}, nil, "log_level"},
		{"bad duration", nil, map[string]string{"MNEMO_READ_TIMEOUT": "soon"}, "MNEMO_READ_TIMEOUT"},
		{"zero request timeout", nil, map[string]string{"MNEMO_REQUEST_TIMEOUT": "0s"}, "request_timeout"},
		{"write timeout too short", []string{"--write-timeout", "50s"}, nil, "write_timeout"},
		{"pprof without a metrics listener", []string{"--pprof"}, nil, "pprof"},
		{"bad pprof", nil, map[string]string{"MNEMO_PPROF": "maybe"}, "MNEMO_PPROF"},
		{"metrics on the API listener", []string{"--metrics-addr", "127.0.0.1:8080"}, nil, "metrics_addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Load("mnemo", tt.args, envOf(tt.env))
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	t.Run("pprof on the metrics listener", func(t *testing.T) {
		c, _, err := Load("mnemo", []string{"--pprof", "--metrics-addr", "127.0.0.1:9464"}, envOf(nil))
		require.NoError(t, err)
		assert.True(t, c.Pprof)
		assert.Equal(t, "127.0.0.1:9464", c.MetricsAddr)
	})
	t.Run("unknown yaml field", func(t *testing.T) {
		_, _, err := Load("mnemo", []string{"--config", bad}, envOf(nil))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "listn")
		assert.False(t, errors.As(err, new(*FieldError)))
	})
}
