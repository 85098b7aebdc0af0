package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// version is set at build time with -ldflags "-X main.version=...";
// revision likewise, by builds without the VCS at hand (the container
// image: -buildvcs=false), where the build info records none.
var version, revision = "dev", ""

// runVersion prints the version and what the binary was built from: the Go
// toolchain, the VCS revision and time when the build recorded them (go
// build does unless -buildvcs=false), and the platform.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo version", "mnemo version [--json]", stdout, stderr)
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	b := readBuild()
	return c.print(b, func(w io.Writer) { b.write(w) })
}

// build is what the binary was built from.
type build struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"time,omitempty"`
	Module   string `json:"module,omitempty"`
	CGO      string `json:"cgo,omitempty"`
}

func readBuild() build {
	b := build{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	b.Revision = revision
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if r := settings["vcs.revision"]; r != "" {
		b.Revision, b.Modified, b.Time = r, settings["vcs.modified"] == "true", settings["vcs.time"]
	}
	b.CGO = settings["CGO_ENABLED"]
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Module = bi.Main.Path + " " + bi.Main.Version
	}
	return b
}

func (b build) write(w io.Writer) {
	fmt.Fprintf(w, "mnemo %s\n", b.Version)
	fmt.Fprintf(w, "  go        %s %s\n", b.Go, b.Platform)
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(w, "  revision  %s\n", rev)
	}
	for _, kv := range [][2]string{{"time", b.Time}, {"module", b.Module}, {"cgo", b.CGO}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "  %-9s %s\n", kv[0], kv[1])
		}
	}
}

// runHealth probes a running server's /healthz: exit status 0 when it
// answers 200, an error naming the status otherwise. It needs no store
// and no key (/healthz is open), so it is the container's health check
// (the distroless image has no shell, curl or wget).
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo health", "mnemo health [--url U] [--timeout D]", stdout, stderr)
	fs := c.fs
	def := os.Getenv("MNEMO_HEALTH_URL")
	if def == "" {
		def = "http://127.0.0.1:8080/healthz"
	}
	url := fs.String("url", def, "the server's /healthz URL (default from MNEMO_HEALTH_URL)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	body = bytes.TrimSpace(body)
	if c.json && json.Valid(body) {
		_, err = fmt.Fprintf(stdout, "%s\n", body) // /healthz answers JSON: that is the document
		return err
	}
	return c.print(struct {
		Body string `json:"body"`
	}{string(body)}, func(w io.Writer) { fmt.Fprintln(w, string(body)) })
}
