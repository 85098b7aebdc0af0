package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/vector/qdrant"
)

// TestComposeConfig runs the mnemo service of docker-compose.yml through
// mnemo's own parsing: the image's environment (Dockerfile ENV) overlaid
// with the service's, and the image's command line (Dockerfile CMD, or the
// service's command), parsed by the subcommand's flag set and loaded as
// `mnemo serve` loads it. Every MNEMO_* variable must be one mnemo reads,
// and the Qdrant URL must be one the Qdrant backend accepts — the compose
// file once passed "qdrant:6334", which it refuses (it wants
// scheme://host[:port]).
func TestComposeConfig(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Command     []string          `yaml:"command"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	svc := compose.Services["mnemo"]
	require.NotEmpty(t, svc.Environment, "docker-compose.yml: no mnemo service environment")

	img := readDockerfile(t)
	env := maps.Clone(img.env)
	// ${VAR:?message} is compose's "required" substitution: stand in a value.
	required := regexp.MustCompile(`^\$\{([A-Z_]+):\?.*\}$`)
	for k, v := range svc.Environment {
		if required.MatchString(v) {
			v = "compose-key:compose:admin:acme"
		}
		env[k] = v
	}
	known := map[string]bool{"MNEMO_API_KEYS": true, "MNEMO_CONFIG": true,
		"MNEMO_ORT_LIB": true, "MNEMO_MODEL_DIR": true, "MNEMO_HEALTH_URL": true}
	for _, name := range config.EnvNames() {
		known[name] = true
	}
	for k := range env {
		assert.True(t, known[k], "docker-compose.yml or the Dockerfile sets %s, which mnemo does not read", k)
	}

	cmd := img.cmd
	if len(svc.Command) > 0 {
		cmd = svc.Command
	}
	require.Equal(t, []string{"serve"}, cmd[:1], "the container serves")
	getenv := func(k string) string { return env[k] }
	c := newCmdline("mnemo serve", "", io.Discard, io.Discard)
	c.cfg = config.RegisterFlags(c.fs, getenv)
	_, err = c.parseN(cmd[1:], 0)
	require.NoError(t, err, "the container's command line %q", cmd)
	cfg, err := c.cfg.Load(getenv)
	require.NoError(t, err)
	assert.Equal(t, "neo4j", cfg.Store)
	assert.Equal(t, "qdrant", cfg.Vector.Backend)
	assert.NoError(t, qdrant.CheckURL(cfg.Vector.QdrantURL), "MNEMO_QDRANT_URL")
	assert.Error(t, qdrant.CheckURL("qdrant:6334"), "the check refuses what the compose file once passed")
	assert.Equal(t, "0.0.0.0:8080", cfg.Listen, "the image listens on every interface")
}

// TestDockerfile checks what the image cannot be built here to show: it
// installs the runtime and model with the script `make model` runs, into
// the directories its environment points mnemo at; it runs as a non-root
// user; its health check is `mnemo health` on the /healthz the server
// listens on; its build stamps the version.
func TestDockerfile(t *testing.T) {
	img := readDockerfile(t)
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^model:\n\t@bash vector/embed/install\.sh \$\(CACHE\)$`, string(mk), "make model runs install.sh")
	dest := regexp.MustCompile(`RUN bash vector/embed/install\.sh (\S+)`).FindStringSubmatch(img.text)
	require.NotNil(t, dest, "the Dockerfile installs the model with vector/embed/install.sh, as make model does")
	assert.Equal(t, dest[1]+"/onnxruntime/libonnxruntime.so", img.env["MNEMO_ORT_LIB"])
	assert.Equal(t, dest[1]+"/model", img.env["MNEMO_MODEL_DIR"])
	assert.Contains(t, img.text, "COPY --from=build "+dest[1]+"/ "+dest[1]+"/")

	require.NotEmpty(t, img.user)
	assert.NotRegexp(t, `^(0|root)(:|$)`, img.user, "non-root")

	require.Len(t, img.health, 2)
	assert.Equal(t, "/usr/local/bin/mnemo", img.health[0])
	assert.Contains(t, commands(), img.health[1])
	u, err := url.Parse(img.env["MNEMO_HEALTH_URL"])
	require.NoError(t, err)
	assert.Equal(t, "/healthz", u.Path)
	_, port, _ := strings.Cut(img.env["MNEMO_LISTEN"], ":")
	assert.Equal(t, port, u.Port(), "the health check probes the port mnemo listens on")
	assert.Contains(t, img.text, "-X main.version=${VERSION}")
	assert.Contains(t, img.text, "-X main.revision=${REVISION}")
}

// dockerfile is what TestComposeConfig and TestDockerfile read of the
// Dockerfile's last stage: its environment, command, user and health
// check command.
type dockerfile struct {
	text        string
	env         map[string]string
	cmd, health []string
	user        string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	raw, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	d := dockerfile{text: string(raw), env: map[string]string{}}
	// Join continued lines, then read the instructions of the last stage.
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	stages := regexp.MustCompile(`(?m)^FROM `).Split(text, -1)
	for _, line := range strings.Split(stages[len(stages)-1], "\n") {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		switch instr {
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				require.True(t, ok, "ENV %s: want KEY=value", kv)
				d.env[k] = v
			}
		case "CMD":
			require.NoError(t, json.Unmarshal([]byte(rest), &d.cmd), "CMD %s", rest)
		case "USER":
			d.user = rest
		case "HEALTHCHECK":
			_, exec, ok := strings.Cut(rest, " CMD ")
			require.True(t, ok, "HEALTHCHECK %s", rest)
			require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(exec)), &d.health), "HEALTHCHECK %s", rest)
		}
	}
	require.NotEmpty(t, d.cmd, "the Dockerfile has no CMD")
	return d
}
