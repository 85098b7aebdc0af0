package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// runVersion prints the version and what the binary was built from: the Go
// toolchain, the VCS revision and time when the build recorded them (go
// build does unless -buildvcs=false), and the platform.
func runVersion(_ context.Context, _ []string, out, _ io.Writer) error {
	_, err := io.WriteString(out, buildInfo())
	return err
}

func buildInfo() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mnemo %s\n", version)
	fmt.Fprintf(&b, "  go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "  revision  %s\n", rev)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "  time      %s\n", t)
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		fmt.Fprintf(&b, "  module    %s %s\n", bi.Main.Path, bi.Main.Version)
	}
	if cgo := settings["CGO_ENABLED"]; cgo != "" {
		fmt.Fprintf(&b, "  cgo       %s\n", cgo)
	}
	return b.String()
}

// runHealth probes a running server's /healthz: exit status 0 when it
// answers 200, an error naming the status otherwise. It needs no store
// and no key (/healthz is open), so it is the container's health check
// (the distroless image has no shell, curl or wget).
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := os.Getenv("MNEMO_HEALTH_URL")
	if def == "" {
		def = "http://127.0.0.1:8080/healthz"
	}
	url := fs.String("url", def, "the server's /healthz URL (default from MNEMO_HEALTH_URL)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
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
	_, err = fmt.Fprintln(stdout, strings.TrimSpace(string(body)))
	return err
}
