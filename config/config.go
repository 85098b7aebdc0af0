// Package config is mnemo's deployment configuration: where it listens,
// which stores it uses, who may call it. Precedence is flags > MNEMO_*
// environment > YAML file > defaults, validated once at start with errors
// that name the field. The policy (types, gate, roles) is separate content,
// edited by policy authors; its shipped default is embedded here.
package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole runtime configuration. The zero value of each field
// means its documented default.
type Config struct {
	// Listen is the HTTP address (default 127.0.0.1:8080).
	Listen string `yaml:"listen"`
	// DataDir holds the embedded stores (default ./mnemo-data).
	DataDir string `yaml:"data_dir"`
	// Store is the graph backend: sqlite (default) or neo4j.
	Store string `yaml:"store"`
	// Neo4j is used when Store is neo4j.
	Neo4j Neo4j `yaml:"neo4j"`
	// Vector selects the vector index: embedded (default), qdrant, neo4j
	// (Neo4j's vector index, on the server Neo4j names) or off.
	Vector Vector `yaml:"vector"`
	// Embed locates the ONNX runtime and model; vector rerank is off when
	// they are missing.
	Embed Embed `yaml:"embed"`
	// PolicyFile overrides the embedded default policy.
	PolicyFile string `yaml:"policy_file"`
	// APIKeys maps keys to principals. Serving needs at least one.
	APIKeys []APIKey `yaml:"api_keys"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text (default) or json.
	LogFormat string `yaml:"log_format"`
	// MaxBodyBytes caps request bodies (default 4 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// OutboxMaxAttempts is how many failed deliveries of a vector-index
	// write make it a dead letter (default 10; `mnemo outbox retry`
	// requeues dead letters).
	OutboxMaxAttempts int64 `yaml:"outbox_max_attempts"`
	// ReadHeaderTimeout bounds reading a request's headers (default 10s).
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included (default
	// 30s): a client that sends its body slowly is cut off.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// RequestTimeout is each request's deadline once read (default 30s);
	// past it the request stops and answers 504.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer (default 75s); it must exceed read_timeout plus
	// request_timeout, or slow answers are cut without a word.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long (default
	// 120s).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MetricsAddr, when set, is a second listener that serves /metrics
	// without an API key (and /debug/pprof with Pprof), meant for a
	// private network; /metrics on Listen always needs an admin key.
	MetricsAddr string `yaml:"metrics_addr"`
	// Pprof mounts /debug/pprof on the MetricsAddr listener (never on
	// Listen).
	Pprof bool `yaml:"pprof"`
}

// Neo4j locates a Neo4j 5 server.
type Neo4j struct {
	URI      string `yaml:"uri"` // default bolt://127.0.0.1:7687
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	Database string `yaml:"database"` // default: the server's default database
	// IndexMemories bounds the memories each process's keyword and mention
	// indexes hold across tenants (about 1.3 KiB each; a tenant whose
	// memories hold more than 64 distinct terms each on average counts as
	// its terms over 64); the least recently searched tenants are dropped
	// past it. 0: 1,000,000; -1: no bound.
	IndexMemories int64 `yaml:"index_memories"`
}

// Vector configures the vector index.
type Vector struct {
	Backend   string `yaml:"backend"`    // embedded (default), qdrant, neo4j (the server of Neo4j), off
	QdrantURL string `yaml:"qdrant_url"` // host:port of Qdrant's gRPC API
}

// Embed locates the embedding runtime and model.
type Embed struct {
	ORTLib   string `yaml:"ort_lib"`   // path to libonnxruntime.so (default .cache/mnemo/onnxruntime/libonnxruntime.so)
	ModelDir string `yaml:"model_dir"` // directory with model.onnx and vocab.txt (default .cache/mnemo/model)
}

// APIKey maps one key to the principal that presents it.
type APIKey struct {
	Key       string   `yaml:"key"`
	Principal string   `yaml:"principal"`
	Roles     []string `yaml:"roles"`
	Tenant    string   `yaml:"tenant"`
	Org       string   `yaml:"org"`
	Repo      string   `yaml:"repo"`
	// User is the user the key acts as: the owner of what it writes and of
	// the private memories it reads. Empty means the principal id.
	User string `yaml:"user"`
}

// FieldError names the configuration field that is wrong.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return fmt.Sprintf("config %s: %v", e.Field, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Defaults returns the configuration with every default filled in.
func Defaults() Config {
	return Config{
		Listen: "127.0.0.1:8080", DataDir: "mnemo-data", Store: "sqlite",
		Neo4j:  Neo4j{URI: "bolt://127.0.0.1:7687"},
		Vector: Vector{Backend: "embedded"},
		Embed: Embed{
			ORTLib:   ".cache/mnemo/onnxruntime/libonnxruntime.so",
			ModelDir: ".cache/mnemo/model",
		},
		LogLevel: "info", LogFormat: "text", MaxBodyBytes: 4 << 20, OutboxMaxAttempts: 10,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second,
		WriteTimeout: 75 * time.Second, IdleTimeout: 120 * time.Second,
	}
}

// setting binds one scalar field to its flag and environment variable.
type setting struct {
	flag, env, usage string
	str              *string
	i64              *int64
	dur              *time.Duration
	b                *bool
}

// EnvNames lists the MNEMO_* environment variables the flags read
// (MNEMO_CONFIG and MNEMO_API_KEYS besides).
func EnvNames() []string {
	var c Config
	var names []string
	for _, s := range c.settings() {
		names = append(names, s.env)
	}
	return names
}

func (c *Config) settings() []setting {
	return []setting{
		{flag: "listen", env: "MNEMO_LISTEN", usage: "HTTP listen address", str: &c.Listen},
		{flag: "data-dir", env: "MNEMO_DATA_DIR", usage: "data directory for the embedded stores", str: &c.DataDir},
		{flag: "store", env: "MNEMO_STORE", usage: "graph store: sqlite|neo4j", str: &c.Store},
		{flag: "neo4j-uri", env: "MNEMO_NEO4J_URI", usage: "Neo4j Bolt URI", str: &c.Neo4j.URI},
		{flag: "neo4j-user", env: "MNEMO_NEO4J_USER", usage: "Neo4j user", str: &c.Neo4j.Username},
		{flag: "neo4j-password", env: "MNEMO_NEO4J_PASSWORD", usage: "Neo4j password", str: &c.Neo4j.Password},
		{flag: "neo4j-database", env: "MNEMO_NEO4J_DATABASE", usage: "Neo4j database", str: &c.Neo4j.Database},
		{flag: "neo4j-index-memories", env: "MNEMO_NEO4J_INDEX_MEMORIES", usage: "memories each process's keyword and mention indexes hold across tenants before the least recently searched are dropped; a tenant of long documents counts as its distinct terms over 64 (0: 1000000, -1: no bound)", i64: &c.Neo4j.IndexMemories},
		{flag: "vector", env: "MNEMO_VECTOR", usage: "vector index: embedded|qdrant|neo4j|off", str: &c.Vector.Backend},
		{flag: "qdrant-url", env: "MNEMO_QDRANT_URL", usage: "Qdrant gRPC URL, scheme://host[:port] (e.g. http://qdrant:6334; https for TLS)", str: &c.Vector.QdrantURL},
		{flag: "ort-lib", env: "MNEMO_ORT_LIB", usage: "path to libonnxruntime.so", str: &c.Embed.ORTLib},
		{flag: "model-dir", env: "MNEMO_MODEL_DIR", usage: "embedding model directory", str: &c.Embed.ModelDir},
		{flag: "policy", env: "MNEMO_POLICY", usage: "policy YAML file (default: the embedded policy)", str: &c.PolicyFile},
		{flag: "log-level", env: "MNEMO_LOG_LEVEL", usage: "debug|info|warn|error", str: &c.LogLevel},
		{flag: "log-format", env: "MNEMO_LOG_FORMAT", usage: "text|json", str: &c.LogFormat},
		{flag: "max-body-bytes", env: "MNEMO_MAX_BODY_BYTES", usage: "request body limit in bytes", i64: &c.MaxBodyBytes},
		{flag: "outbox-max-attempts", env: "MNEMO_OUTBOX_MAX_ATTEMPTS", usage: "failed deliveries before a vector-index write is dead-lettered", i64: &c.OutboxMaxAttempts},
		{flag: "read-header-timeout", env: "MNEMO_READ_HEADER_TIMEOUT", usage: "time to read request headers", dur: &c.ReadHeaderTimeout},
		{flag: "read-timeout", env: "MNEMO_READ_TIMEOUT", usage: "time to read a whole request", dur: &c.ReadTimeout},
		{flag: "request-timeout", env: "MNEMO_REQUEST_TIMEOUT", usage: "deadline of each request once read", dur: &c.RequestTimeout},
		{flag: "write-timeout", env: "MNEMO_WRITE_TIMEOUT", usage: "time from request headers to the end of the answer", dur: &c.WriteTimeout},
		{flag: "idle-timeout", env: "MNEMO_IDLE_TIMEOUT", usage: "keep-alive idle time", dur: &c.IdleTimeout},
		{flag: "metrics-addr", env: "MNEMO_METRICS_ADDR", usage: "listen address serving /metrics without an API key (a private network)", str: &c.MetricsAddr},
		{flag: "pprof", env: "MNEMO_PPROF", usage: "serve /debug/pprof on the metrics listener", b: &c.Pprof},
	}
}

// Load builds the configuration from defaults, the YAML file named by
// --config or MNEMO_CONFIG, the MNEMO_* environment and the flags in args,
// in rising precedence, and validates it. getenv is os.Getenv in main.
// It returns the arguments left after the flags.
func Load(name string, args []string, getenv func(string) string) (Config, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := RegisterFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return Config{}, nil, err
	}
	c, err := f.Load(getenv)
	return c, fs.Args(), err
}

// Flags are the configuration flags declared on a command's flag set, so a
// command parses its own flags and the configuration's in one pass
// (RegisterFlags, then the FlagSet's Parse, then Load).
type Flags struct {
	fs         *flag.FlagSet
	configFile *string
	keys       *string
	settings   []setting // bound to a scratch Config: only flags set are copied over
}

// RegisterFlags declares --config, --api-keys and one flag per setting on
// fs. getenv supplies --config's default (MNEMO_CONFIG).
func RegisterFlags(fs *flag.FlagSet, getenv func(string) string) *Flags {
	f := &Flags{fs: fs}
	f.configFile = fs.String("config", getenv("MNEMO_CONFIG"), "YAML configuration file (env MNEMO_CONFIG)")
	f.keys = fs.String("api-keys", "", "API keys: key:principal:role1|role2:tenant[/org[/repo]][:user],... (env MNEMO_API_KEYS)")
	// Flags are registered against a scratch config so their defaults do
	// not overwrite file and environment values; only flags actually set
	// are copied over.
	var scratch Config
	f.settings = scratch.settings()
	for _, s := range f.settings {
		switch {
		case s.str != nil:
			fs.StringVar(s.str, s.flag, "", s.usage+" (env "+s.env+")")
		case s.dur != nil:
			fs.DurationVar(s.dur, s.flag, 0, s.usage+" (env "+s.env+")")
		case s.b != nil:
			fs.BoolVar(s.b, s.flag, false, s.usage+" (env "+s.env+")")
		default:
			fs.Int64Var(s.i64, s.flag, 0, s.usage+" (env "+s.env+")")
		}
	}
	return f
}

// Names lists the flags RegisterFlags declares.
func (f *Flags) Names() []string {
	names := []string{"config", "api-keys"}
	for _, s := range f.settings {
		names = append(names, s.flag)
	}
	return names
}

// Load builds and validates the configuration once the flag set is
// parsed: defaults, the file, the environment, then the flags set.
func (f *Flags) Load(getenv func(string) string) (Config, error) {
	c := Defaults()
	if *f.configFile != "" {
		if err := c.readFile(*f.configFile); err != nil {
			return Config{}, err
		}
	}
	for _, s := range c.settings() {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		if err := s.set(v); err != nil {
			return Config{}, &FieldError{Field: s.env, Err: err}
		}
	}
	keys := *f.keys
	if v := getenv("MNEMO_API_KEYS"); v != "" && keys == "" {
		keys = v
	}
	target := c.settings()
	var setErr error
	f.fs.Visit(func(fl *flag.Flag) {
		for i, s := range f.settings {
			if s.flag == fl.Name && setErr == nil {
				if err := target[i].set(fl.Value.String()); err != nil {
					setErr = &FieldError{Field: s.flag, Err: err}
				}
			}
		}
	})
	if setErr != nil {
		return Config{}, setErr
	}
	if keys != "" {
		parsed, err := ParseAPIKeys(keys)
		if err != nil {
			return Config{}, &FieldError{Field: "api_keys", Err: err}
		}
		c.APIKeys = parsed
	}
	return c, c.Validate()
}

func (s setting) set(v string) error {
	if s.str != nil {
		*s.str = v
		return nil
	}
	if s.dur != nil {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 30s or 2m", v)
		}
		*s.dur = d
		return nil
	}
	if s.b != nil {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*s.b = b
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	*s.i64 = n
	return nil
}

func (c *Config) readFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) { // an empty file sets nothing
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// ParseAPIKeys parses the compact key list of --api-keys and
// MNEMO_API_KEYS: comma-separated key:principal:roles:scope[:user], roles
// joined with |, scope tenant[/org[/repo]], user (optional) the user the
// key acts as (else the principal id).
func ParseAPIKeys(s string) ([]APIKey, error) {
	var out []APIKey
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.Split(item, ":")
		if len(parts) != 4 && len(parts) != 5 {
			return nil, fmt.Errorf("entry %d: want key:principal:roles:tenant[/org[/repo]][:user]", i+1)
		}
		scope := strings.Split(parts[3], "/")
		if len(scope) > 3 {
			return nil, fmt.Errorf("entry %d: scope has more than tenant/org/repo", i+1)
		}
		k := APIKey{Key: parts[0], Principal: parts[1], Roles: strings.Split(parts[2], "|"), Tenant: scope[0]}
		if len(scope) > 1 {
			k.Org = scope[1]
		}
		if len(scope) > 2 {
			k.Repo = scope[2]
		}
		if len(parts) == 5 {
			if parts[4] == "" {
				return nil, fmt.Errorf("entry %d: the user field is empty: leave it out to act as the principal", i+1)
			}
			k.User = parts[4]
		}
		out = append(out, k)
	}
	return out, nil
}

// Validate checks the configuration once, naming the field at fault.
func (c Config) Validate() error {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case c.Listen == "":
		return fail("listen", "required")
	case c.Store != "sqlite" && c.Store != "neo4j":
		return fail("store", "%q is not sqlite or neo4j", c.Store)
	case c.Store == "sqlite" && c.DataDir == "":
		return fail("data_dir", "required for the sqlite store")
	case c.Store == "neo4j" && c.Neo4j.URI == "":
		return fail("neo4j.uri", "required for the neo4j store")
	case c.Vector.Backend == "neo4j" && c.Neo4j.URI == "":
		return fail("neo4j.uri", "required for the neo4j vector backend")
	case c.Vector.Backend != "embedded" && c.Vector.Backend != "qdrant" && c.Vector.Backend != "neo4j" && c.Vector.Backend != "off":
		return fail("vector.backend", "%q is not embedded, qdrant, neo4j or off", c.Vector.Backend)
	case c.Vector.Backend == "qdrant" && c.Vector.QdrantURL == "":
		return fail("vector.qdrant_url", "required for the qdrant backend")
	case c.Neo4j.IndexMemories < -1:
		return fail("neo4j.index_memories", "must be positive, 0 (the default, 1000000) or -1 (no bound)")
	case c.MaxBodyBytes <= 0:
		return fail("max_body_bytes", "must be positive")
	case c.OutboxMaxAttempts <= 0:
		return fail("outbox_max_attempts", "must be positive")
	case c.ReadHeaderTimeout <= 0:
		return fail("read_header_timeout", "must be positive")
	case c.ReadTimeout <= 0:
		return fail("read_timeout", "must be positive")
	case c.RequestTimeout <= 0:
		return fail("request_timeout", "must be positive")
	case c.IdleTimeout <= 0:
		return fail("idle_timeout", "must be positive")
	case c.Pprof && c.MetricsAddr == "":
		return fail("pprof", "needs metrics_addr: pprof is served on the metrics listener only, never on the API's")
	case c.MetricsAddr != "" && c.MetricsAddr == c.Listen:
		return fail("metrics_addr", "must differ from listen")
	case c.WriteTimeout <= c.ReadTimeout+c.RequestTimeout:
		return fail("write_timeout", "%s must exceed read_timeout plus request_timeout (%s), or slow answers are cut off",
			c.WriteTimeout, c.ReadTimeout+c.RequestTimeout)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fail("log_level", "%q is not debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fail("log_format", "%q is not text or json", c.LogFormat)
	}
	seen := map[string]bool{}
	for i, k := range c.APIKeys {
		field := fmt.Sprintf("api_keys[%d]", i)
		switch {
		case len(k.Key) < 8:
			return fail(field+".key", "must be at least 8 characters")
		case seen[k.Key]:
			return fail(field+".key", "duplicate key")
		case k.Principal == "":
			return fail(field+".principal", "required")
		case k.Tenant == "":
			return fail(field+".tenant", "required")
		case len(k.Roles) == 0:
			return fail(field+".roles", "at least one role")
		}
		seen[k.Key] = true
	}
	return nil
}
