package main

import (
	"net/url"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/mnemo-dev/mnemo/config"
)

// TestComposeConfig loads the mnemo service's environment from
// docker-compose.yml the way `mnemo serve` would and checks that every
// MNEMO_* variable is one mnemo reads and that the values parse — the
// compose file once pointed at Qdrant with "qdrant:6334", which the Qdrant
// backend refuses (it wants scheme://host[:port]).
func TestComposeConfig(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	env := compose.Services["mnemo"].Environment
	require.NotEmpty(t, env, "docker-compose.yml: no mnemo service environment")

	// ${VAR:?message} is compose's "required" substitution: stand in a value.
	required := regexp.MustCompile(`^\$\{([A-Z_]+):\?.*\}$`)
	for k, v := range env {
		if required.MatchString(v) {
			env[k] = "compose-key:compose:admin:acme"
		}
	}
	known := map[string]bool{"MNEMO_API_KEYS": true, "MNEMO_CONFIG": true}
	for _, name := range config.EnvNames() {
		known[name] = true
	}
	for k := range env {
		assert.True(t, known[k], "docker-compose.yml sets %s, which mnemo does not read", k)
	}

	cfg, _, err := config.Load("mnemo serve", nil, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "neo4j", cfg.Store)
	assert.Equal(t, "qdrant", cfg.Vector.Backend)
	u, err := url.Parse(cfg.Vector.QdrantURL)
	require.NoError(t, err)
	assert.NotEmpty(t, u.Host, "MNEMO_QDRANT_URL %q: the Qdrant backend wants scheme://host[:port]", cfg.Vector.QdrantURL)
	assert.Equal(t, "qdrant", u.Hostname())
}
