package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// Exit codes. rules diff's are diff(1)'s: 0 the same, 1 different, 2
// trouble (an invalid file, Redis failing) or bad usage.
const (
	exitOK       = 0 // done; for rules diff, no difference
	exitProblems = 1 // problems found: an invalid file, a refused push, Redis failing; for rules diff, a difference
	exitUsage    = 2 // bad usage: an unknown command, a missing argument, a bad flag or URL; for rules diff, trouble too
)

// defaultRedis is the Redis the tool talks to without --redis or
// $RATEWARDEN_REDIS.
const defaultRedis = "redis://127.0.0.1:6379"

// The environment variables of the Redis connection: the URL, the password
// (never a flag, so that it is on no command line), a file holding the
// password, and a CA file.
const (
	envRedis        = "RATEWARDEN_REDIS"
	envPassword     = "RATEWARDEN_REDIS_PASSWORD"
	envPasswordFile = "RATEWARDEN_REDIS_PASSWORD_FILE"
	envCA           = "RATEWARDEN_REDIS_CA"
)

// errUsage marks bad usage (exit 2); errFound, problems already written out
// (exit 1, nothing more to say); errTrouble, trouble that exits 2 although
// it is no bad usage (rules diff's, as diff(1)'s).
var (
	errUsage   = errors.New("bad usage")
	errFound   = errors.New("problems found")
	errTrouble = errors.New("trouble")
)

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// command is one of the tool's commands.
type command struct {
	name  string   // "rules push"
	args  []string // the positional arguments' names
	short string   // what it does, in a line
	long  string   // what it does and prints, for -h
	redis bool     // it talks to Redis: --redis, --prefix, --timeout
	run   func(e *env, args []string) error
}

// commands are the tool's commands, in the order the usage lists them.
var commands = []*command{
	cmdValidate, cmdDiff, cmdPush, cmdShow, cmdKeyShow, cmdKeyReset,
}

// env is what a command runs with: its output and its flags.
type env struct {
	stdout, stderr io.Writer
	redisURL       string
	// password ($RATEWARDEN_REDIS_PASSWORD), passwordFile
	// (--redis-password-file) and caFile (--redis-ca) add to the URL.
	password, passwordFile, caFile string
	prefix                         string
	timeout                        time.Duration
}

// run runs the tool on args (without the program's name) and returns its
// exit code.
func run(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, redisURL: defaultRedis, prefix: rules.DefaultRedisPrefix, timeout: rules.DefaultRedisTimeout}
	e.readEnv()
	err := e.dispatch(args)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "ratewarden: %v\n", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		fmt.Fprintln(stderr, "run 'ratewarden -h' for the commands, 'ratewarden COMMAND -h' for one")
		return exitUsage
	case errors.Is(err, errTrouble):
		if !errors.Is(err, errFound) { // problems are written out already
			fmt.Fprintln(stderr, strings.TrimSuffix(err.Error(), ": "+errTrouble.Error()))
		}
		return exitUsage
	case errors.Is(err, errFound):
		return exitProblems
	}
	fmt.Fprintln(stderr, err)
	return exitProblems
}

// dispatch finds the command args name and runs it.
func (e *env) dispatch(args []string) error {
	if len(args) == 0 {
		e.usage(e.stderr)
		return usageErr("no command")
	}
	if isHelp(args[0]) {
		e.usage(e.stdout)
		return flag.ErrHelp
	}
	if len(args) == 1 || isHelp(args[1]) {
		if !e.group(args[0]) {
			return usageErr("unknown command %q", shorten(args[0]))
		}
		if len(args) == 1 {
			return usageErr("%s needs a command: %s", args[0], strings.Join(e.groupNames(args[0]), ", "))
		}
		e.groupUsage(args[0])
		return flag.ErrHelp
	}
	name := args[0] + " " + args[1]
	for _, c := range commands {
		if c.name == name {
			return e.runCommand(c, args[2:])
		}
	}
	if e.group(args[0]) {
		return usageErr("unknown command %q (want %s)", shorten(name), strings.Join(e.groupNames(args[0]), ", "))
	}
	return usageErr("unknown command %q", shorten(args[0]))
}

// runCommand parses c's flags and arguments and runs it.
func (e *env) runCommand(c *command, args []string) error {
	fs := flag.NewFlagSet("ratewarden "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.redis {
		e.defineRedisFlags(fs)
		fs.StringVar(&e.prefix, "prefix", e.prefix, "the key `prefix` of the Redis store and the rules")
		fs.DurationVar(&e.timeout, "timeout", e.timeout, "bound on each Redis call")
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		e.commandUsage(c, fs)
		return err
	}
	if err != nil {
		return usageErr("%s: %v", c.name, err)
	}
	if len(pos) != len(c.args) {
		want := strings.Join(c.args, " and ")
		if want == "" {
			want = "no arguments"
		}
		return usageErr("%s takes %s, got %d argument%s", c.name, want, len(pos), plural(len(pos)))
	}
	if c.redis {
		if err := e.checkRedisFlags(c); err != nil {
			return err
		}
	}
	return c.run(e, pos)
}

// checkRedisFlags checks --redis, --prefix and --timeout.
func (e *env) checkRedisFlags(c *command) error {
	if _, err := redisstore.ParseURL(e.redisURL, e.urlOptions()...); err != nil {
		return usageErr("%s: --redis: %v", c.name, err)
	}
	// The store's check of a prefix is the rules' (rules.WithRedisPrefix).
	if _, err := luascript.New(unusedBackend{}, luascript.WithPrefix(e.prefix)); err != nil {
		return usageErr("%s: --prefix: %v", c.name, err)
	}
	if e.timeout <= 0 || e.timeout > time.Hour {
		return usageErr("%s: --timeout %s: want more than 0, at most 1h", c.name, e.timeout)
	}
	return nil
}

// unusedBackend is a luascript.Backend that is never called: New needs one
// to check options.
type unusedBackend struct{}

func (unusedBackend) Eval(context.Context, *luascript.Script, []string, []string, []int64) ([]int64, error) {
	return nil, errors.New("unused")
}

// parseInterleaved parses fs's flags wherever they are among args (before,
// between or after the positional arguments, which it returns); all after a
// "--" are positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// group reports whether name is a group of commands ("rules", "key").
func (e *env) group(name string) bool { return len(e.groupNames(name)) > 0 }

// groupNames returns the commands of group name.
func (e *env) groupNames(name string) []string {
	var out []string
	for _, c := range commands {
		if g, sub, _ := strings.Cut(c.name, " "); g == name {
			out = append(out, sub)
		}
	}
	return out
}

func isHelp(s string) bool {
	return s == "-h" || s == "-help" || s == "--help" || s == "--h" || s == "help"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// shorten bounds a value quoted in a message.
func shorten(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
