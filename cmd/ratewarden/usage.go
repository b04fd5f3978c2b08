package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// toolUsage heads ratewarden -h; %s is the list of commands.
const toolUsage = `usage: ratewarden COMMAND [flags] [arguments]

ratewarden checks, compares and pushes the rate-limit rules kept in Redis
(every instance that watches them, with rules.WatchRedis, loads a push at
once), and shows and resets a client's counters under them.

Commands:
%s
Flags of the commands that talk to Redis, anywhere after the command:
  --redis URL       redis://host:port/db or redis-cluster://host:port,host:port
                    (default $RATEWARDEN_REDIS, or redis://127.0.0.1:6379)
  --prefix PREFIX   the key prefix of the Redis store and the rules (default rw:)
  --timeout D       bound on each Redis call (default 5s)

Exit status: 0 done (for rules diff: no difference), 1 problems found (an
invalid file, a difference, a refused push, no such policy, Redis failing),
2 bad usage. Results go to standard output, messages to standard error.
Run 'ratewarden COMMAND -h' for a command's details.
`

// usage writes the tool's usage to w.
func (e *env) usage(w io.Writer) {
	var b strings.Builder
	for _, c := range commands {
		line := "  " + c.name
		if len(c.args) > 0 {
			line += " " + strings.Join(c.args, " ")
		}
		fmt.Fprintf(&b, "%-30s %s\n", line, c.short)
	}
	fmt.Fprintf(w, toolUsage, b.String())
}

// commandUsage writes c's usage, with fs's flags, to standard output.
func (e *env) commandUsage(c *command, fs *flag.FlagSet) {
	synopsis := "ratewarden " + c.name
	if c.redis {
		synopsis += " [flags]"
	}
	if len(c.args) > 0 {
		synopsis += " " + strings.Join(c.args, " ")
	}
	fmt.Fprintf(e.stdout, "usage: %s\n\n%s\n", synopsis, strings.TrimSpace(c.long))
	if c.redis {
		fmt.Fprint(e.stdout, "\nFlags:\n")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
	}
}
