package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/server"
)

// The command line is parsed with the standard library's flag package: one
// flag.FlagSet per subcommand, built by cmdline, which declares the flags
// every command shares once (--json; the identity flags; the configuration
// flags of the commands that open a store) and parses flags wherever they
// stand among the positional arguments (docs/operations.md, "The command
// line").

// cmdline is one subcommand's command line.
type cmdline struct {
	name  string // "mnemo edit", then "mnemo edit propose" once the verb is read
	usage string // the synopsis: "mnemo get [flags] ID"
	fs    *flag.FlagSet
	json  bool
	cfg   *config.Flags // nil for a command that opens no store

	stdout, stderr io.Writer
}

// newCmdline starts the command line of name, whose synopsis is usage
// ("usage: " is added), with --json declared.
func newCmdline(name, usage string, stdout, stderr io.Writer) *cmdline {
	c := &cmdline{name: name, usage: usage, fs: flag.NewFlagSet(name, flag.ContinueOnError), stdout: stdout, stderr: stderr}
	c.fs.SetOutput(io.Discard) // run prints errors; -h prints help (help)
	c.fs.Usage = func() {}
	c.fs.BoolVar(&c.json, "json", false, "print the result as one JSON document on stdout (errors as JSON on stderr)")
	return c
}

// withConfig declares the configuration flags (store, data directory,
// policy, vectors...) for a command that opens a store.
func (c *cmdline) withConfig() *cmdline {
	c.cfg = config.RegisterFlags(c.fs, os.Getenv)
	return c
}

// identity declares the identity flags (--as, --user, --roles, --tenant,
// --org, --repo) with roles as the default roles.
func (c *cmdline) identity(roles string) *identity {
	var id identity
	id.register(c.fs, roles)
	return &id
}

// scope declares the identity flags but --user, for a command whose --user
// means something else.
func (c *cmdline) scope(roles string) *identity {
	var id identity
	id.registerScope(c.fs, roles)
	return &id
}

// parse parses args, flags and positional arguments in any order ("--"
// ends the flags), and returns the positional arguments. -h prints the help
// and returns flag.ErrHelp.
func (c *cmdline) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.help(c.stdout)
				return nil, err
			}
			return nil, c.flagError(err)
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// The number of positional arguments a command (or verb) takes, besides an
// exact count.
const (
	anyArgs  = -1 // any number
	someArgs = -2 // at least one
)

// open parses args, checks that they hold n positional arguments and opens
// the app on the configuration flags.
func (c *cmdline) open(ctx context.Context, args []string, n int) (*app, []string, error) {
	pos, err := c.parseN(args, n)
	if err != nil {
		return nil, nil, err
	}
	a, err := c.openParsed(ctx)
	return a, pos, err
}

// parseN parses args as parse does and checks that they hold n positional
// arguments.
func (c *cmdline) parseN(args []string, n int) ([]string, error) {
	pos, err := c.parse(args)
	if err != nil {
		return nil, err
	}
	return pos, c.checkArgs(pos, n)
}

// openVerb reads the verb (one of arity's keys), then opens the rest of
// args as open does with the verb's number of arguments.
func (c *cmdline) openVerb(ctx context.Context, args []string, arity map[string]int) (string, *app, []string, error) {
	verb, err := c.verb(args, slices.Sorted(maps.Keys(arity))...)
	if err != nil {
		return "", nil, nil, err
	}
	a, pos, err := c.open(ctx, args[1:], arity[verb])
	return verb, a, pos, err
}

// checkArgs is a usage error unless pos holds n arguments.
func (c *cmdline) checkArgs(pos []string, n int) error {
	switch {
	case n == anyArgs, n == someArgs && len(pos) > 0, n == len(pos):
		return nil
	case n == someArgs:
		return c.usageErr("missing arguments")
	}
	return c.usageErr(fmt.Sprintf("want %d argument(s), got %d", n, len(pos)))
}

// openParsed opens the app once the command line is parsed (and its
// arguments checked: a command refused for its arguments opens nothing).
func (c *cmdline) openParsed(ctx context.Context) (*app, error) {
	cfg, err := c.cfg.Load(os.Getenv)
	if err != nil {
		return nil, err
	}
	return openApp(ctx, c.name, cfg, c.stderr)
}

// verb reads the verb of a command with verbs (`mnemo edit propose ...`)
// before anything is opened: -h, --help or help print the help and return
// flag.ErrHelp (exit 0, no store created); no verb or an unknown one is a
// usage error. The command's name gains the verb.
func (c *cmdline) verb(args []string, verbs ...string) (string, error) {
	if len(args) == 0 {
		return "", c.usageErr("")
	}
	switch v := args[0]; {
	case v == "-h" || v == "--help" || v == "-help" || v == "help":
		c.help(c.stdout)
		return "", flag.ErrHelp
	case slices.Contains(verbs, v):
		c.name += " " + v
		return v, nil
	default:
		return "", c.usageErr(fmt.Sprintf("unknown verb %q", v))
	}
}

// print writes the result: v as JSON with --json or when text is nil,
// otherwise the text form.
func (c *cmdline) print(v any, text func(w io.Writer)) error {
	if c.json || text == nil {
		return printJSON(c.stdout, v)
	}
	text(c.stdout)
	return nil
}

// printJSON writes v to w as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// help prints the synopsis and the flags: the command's own, then the
// configuration flags.
func (c *cmdline) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n", c.usage)
	var cfgNames []string
	if c.cfg != nil {
		cfgNames = c.cfg.Names()
	}
	var own, cfg []*flag.Flag
	c.fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(cfgNames, f.Name) {
			cfg = append(cfg, f)
		} else {
			own = append(own, f)
		}
	})
	fmt.Fprintln(w, "\nflags (before or after the arguments; -x and --x alike):")
	printFlags(w, own)
	if len(cfg) > 0 {
		fmt.Fprintln(w, "\nconfiguration flags (precedence: flag > MNEMO_* environment > --config file > default):")
		printFlags(w, cfg)
	}
}

func printFlags(w io.Writer, fs []*flag.Flag) {
	for _, f := range fs {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		switch {
		case f.DefValue == "" || f.DefValue == "false" || f.DefValue == "0" || f.DefValue == "0s":
		case typ == "string":
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			usage += " (default " + f.DefValue + ")"
		}
		if len(line) > 27 {
			line += "\n" + strings.Repeat(" ", 28)
		}
		fmt.Fprintf(w, "%-28s %s\n", line, usage)
	}
}

// usageError is a command line mnemo cannot run: an unknown flag or verb, a
// bad flag value, missing or extra arguments. It exits 2.
type usageError struct {
	msg   string
	field string // the flag at fault, without dashes, or ""
}

func (e *usageError) Error() string { return e.msg }

// usageErr is a usage error of c: msg and the synopsis (msg "": the
// synopsis alone).
func (c *cmdline) usageErr(msg string) error {
	if msg == "" {
		return &usageError{msg: "usage: " + c.usage}
	}
	return &usageError{msg: msg + "; usage: " + c.usage}
}

// flagError turns a flag package error into a usage error naming the flag.
func (c *cmdline) flagError(err error) error {
	msg := err.Error()
	ue := &usageError{}
	for _, p := range []struct{ prefix, say string }{
		{"flag provided but not defined: -", "unknown flag --%s (run '" + c.name + " -h' for its flags)"},
		{"flag needs an argument: -", "flag --%s needs a value"},
	} {
		if name, ok := strings.CutPrefix(msg, p.prefix); ok {
			ue.field, ue.msg = name, fmt.Sprintf(p.say, name)
			return ue
		}
	}
	// invalid value "x" for flag -limit: parse error
	if _, after, ok := strings.Cut(msg, " for flag -"); ok {
		ue.field, _, _ = strings.Cut(after, ":")
	}
	ue.msg = strings.Replace(msg, " for flag -", " for flag --", 1)
	return ue
}

// cliError is the JSON body of a failed command under --json, as the HTTP
// API's error envelope.
type cliError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// describe is err's code, message and field: usage errors are "usage",
// configuration errors "invalid", engine and store errors as the HTTP API
// names them, anything else "failed". The message is the whole error: the
// operator at the terminal sees what a client of the API would not.
func describe(err error) cliError {
	var ue *usageError
	if errors.As(err, &ue) {
		return cliError{Code: "usage", Message: ue.Error(), Field: ue.field}
	}
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return cliError{Code: "invalid", Message: err.Error(), Field: fe.Field}
	}
	_, code, _, field := server.Describe(err)
	if code == "internal" {
		code = "failed"
	}
	return cliError{Code: code, Message: err.Error(), Field: field}
}

// jsonRequested reports whether args ask for --json, read before the
// command parses them so that a command line that fails to parse still
// answers in JSON.
func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "json" {
			b, err := strconv.ParseBool(val)
			return !hasVal || (err == nil && b)
		}
	}
	return false
}

// page is the --json form of a list with a next page: the items and the
// cursor that reads on ("" on the last page).
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor"`
}

func pageOf[T any](items []T, next string) page[T] {
	return page[T]{Items: nonNil(items), NextCursor: next}
}

// printNext is the text form of a next page's cursor.
func printNext(w io.Writer, next string) {
	if next != "" {
		fmt.Fprintf(w, "next page: --cursor %s\n", next)
	}
}

// nonNil is s, or an empty slice for nil, so that JSON says [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
