package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/mcp"
)

// runMCP serves MCP on stdin/stdout until the client disconnects or ctx
// ends. The caller is the principal of the API key in MNEMO_API_KEY, one of
// the configured keys (MNEMO_API_KEYS), as over HTTP. Logs go to stderr;
// stdout carries only the protocol (--json makes only the errors JSON).
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo mcp", "mnemo mcp [flags]   (MCP on stdin/stdout as the key in MNEMO_API_KEY)", stdout, stderr).withConfig()
	a, _, err := c.open(ctx, args, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(a.cfg.APIKeys) == 0 {
		return errors.New("no API keys configured: set MNEMO_API_KEYS=key:principal:roles:tenant and MNEMO_API_KEY=key")
	}
	// The key table is the HTTP server's; gin must not print to stdout.
	gin.SetMode(gin.ReleaseMode)
	gin.DefaultWriter = stderr
	keys, err := server.New(server.Options{Engine: a.engine, Keys: principals(a.cfg.APIKeys), Logger: a.log})
	if err != nil {
		return err
	}
	p, err := keys.Principal(os.Getenv("MNEMO_API_KEY"))
	if err != nil {
		_, _, msg, _ := server.Describe(err)
		return fmt.Errorf("MNEMO_API_KEY: %s", msg)
	}
	m, err := mcp.New(mcp.Options{Engine: a.engine, Principal: &p, Version: version, Logger: a.log})
	if err != nil {
		return err
	}
	// With the vector index open here (no server holds it), this process
	// drains the vector outbox as the server would.
	bg, stopBG := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer func() { stopBG(); jobs.Wait() }()
	if a.index != nil {
		jobs.Go(func() { _ = a.engine.RunOutbox(bg, 5*time.Second, 256) })
	}
	a.log.Info("mnemo mcp on stdio", "principal", p.ID, "wiring", a.describe())
	return m.Run(ctx, &sdk.StdioTransport{})
}
