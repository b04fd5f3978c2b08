package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// toolUsage heads ratewarden -h; the first %s is the list of commands, the
// second the Redis flags' help.
const toolUsage = `usage: ratewarden COMMAND [flags] [arguments]

ratewarden checks, compares and pushes the rate-limit rules kept in Redis
(every instance that watches them, with rules.WatchRedis, loads a push at
once), and shows and resets a client's counters under them.

Commands:
%s
%s
Exit status: 0 done, 1 problems found (an invalid file, a refused push, no
such policy, Redis failing), 2 bad usage; rules diff exits as diff(1) does: 0
the same, 1 different, 2 trouble (an invalid file, Redis failing) or bad
usage. Results go to standard output, messages to standard error.
Run 'ratewarden COMMAND -h' for a command's details, 'ratewarden rules -h' or
'ratewarden key -h' for a group's.
`

// redisFlagsHelp is the help of the flags every command that talks to Redis
// takes: the tool's usage and each group's give it.
const redisFlagsHelp = `Flags of the commands that talk to Redis, anywhere after the command:
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
                    password's special characters (%40 for @).
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
by --redis-password-file; a password in the URL wins over both, and the file
over the variable. The tool never prints a password: messages show it as
xxxxx.
`

// groupUsage heads ratewarden GROUP -h: the group's commands; %[1]s is the
// group, %[2]s the list of its commands, %[3]s the Redis flags' help.
const groupUsage = `usage: ratewarden %[1]s COMMAND [flags] [arguments]

Commands:
%[2]s
%[3]s
Run 'ratewarden %[1]s COMMAND -h' for a command's details, 'ratewarden -h' for
every command and the exit status.
`

// usage writes the tool's usage to w.
func (e *env) usage(w io.Writer) {
	fmt.Fprintf(w, toolUsage, commandList(""), redisFlagsHelp)
}

// groupUsage writes the usage of the commands of group (rules, key) to
// standard output.
func (e *env) groupUsage(group string) {
	fmt.Fprintf(e.stdout, groupUsage, group, commandList(group), redisFlagsHelp)
}

// commandList lists the commands of group (every command for ""), one a
// line, with what each does.
func commandList(group string) string {
	var b strings.Builder
	for _, c := range commands {
		if group != "" && !strings.HasPrefix(c.name, group+" ") {
			continue
		}
		line := "  " + c.name
		if len(c.args) > 0 {
			line += " " + strings.Join(c.args, " ")
		}
		fmt.Fprintf(&b, "%-30s %s\n", line, c.short)
	}
	return b.String()
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
