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
  --redis URL       the Redis (default $RATEWARDEN_REDIS, or redis://127.0.0.1:6379):
                      redis://[user:password@]host:port[/db][?options]
                      rediss://...           the same over TLS
                      redis-cluster://[user:password@]host:port,host:port[?options]
                      rediss-cluster://...   a cluster over TLS
                      redis-sentinel://[user:password@]host:port,host:port/master[/db][?options]
                      rediss-sentinel://...  Sentinels and their master over TLS
                    options are go-redis's: dial_timeout=2s, read_timeout, write_timeout,
                    pool_size, max_retries, client_name, protocol, db, ...; sentinel_auth=true
                    sends the user and password to the Sentinels too. Percent-encode a
                    password's special characters (%%40 for @).
  --redis-password-file FILE
                    the password, when the URL has none: the file's content, without
                    its trailing newline (default $RATEWARDEN_REDIS_PASSWORD_FILE)
  --redis-ca FILE   the PEM CA that signed the server's certificate, for a private CA
                    (default $RATEWARDEN_REDIS_CA; otherwise the system's roots). The
                    certificate and its name are always checked.
  --prefix PREFIX   the key prefix of the Redis store and the rules (default rw:)
  --timeout D       bound on each Redis call (default 5s)

Keep the password off the command line: put the user in the URL and the
password in $RATEWARDEN_REDIS_PASSWORD, or in a file (a mounted secret) named
by --redis-password-file; a password in the URL wins over both, and the file over the variable. The tool
never prints a password: messages show it as xxxxx.

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
