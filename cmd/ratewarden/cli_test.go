package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad usage exits 2 with a message on standard error that says what is
// wrong and where help is; nothing goes to standard output. None of these
// reach Redis (the address is nobody's).
func TestBadUsage(t *testing.T) {
	t.Parallel()
	const nobody = "--redis=redis://127.0.0.1:1"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"deploy"}, `unknown command "deploy"`},
		{"unknown rules command", []string{"rules", "apply", "x"}, `unknown command "rules apply" (want validate, diff, push, show)`},
		{"unknown key command", []string{"key", "delete", "p", "k"}, `unknown command "key delete" (want show, reset)`},
		{"group without command", []string{"rules"}, "rules needs a command: validate, diff, push, show"},
		{"validate without file", []string{"rules", "validate"}, "rules validate takes FILE, got 0 arguments"},
		{"validate with two files", []string{"rules", "validate", "a", "b"}, "got 2 arguments"},
		{"push without file", []string{"rules", "push", nobody}, "rules push takes FILE, got 0 arguments"},
		{"diff without file", []string{"rules", "diff", nobody}, "rules diff takes FILE"},
		{"show with an argument", []string{"rules", "show", "x", nobody}, "rules show takes no arguments, got 1 argument"},
		{"key show without key", []string{"key", "show", "api", nobody}, "key show takes POLICY and KEY, got 1 argument"},
		{"key reset without arguments", []string{"key", "reset", nobody}, "key reset takes POLICY and KEY, got 0 arguments"},
		{"key reset of a tier", []string{"key", "reset", "api/paid", "k", nobody}, `"api/paid" names a tier`},
		{"unknown flag", []string{"rules", "push", "--force", "f"}, "flag provided but not defined: -force"},
		{"validate takes no redis", []string{"rules", "validate", "--redis", "redis://h:1", "f"}, "flag provided but not defined: -redis"},
		{"flag without value", []string{"rules", "show", "--redis"}, "flag needs an argument: -redis"},
		{"URL without scheme", []string{"rules", "show", "--redis", "localhost:6379"}, "--redis: redisstore: bad Redis URL"},
		{"URL of another scheme", []string{"rules", "show", "--redis", "memcached://h:6379"}, `unknown scheme "memcached"`},
		{"URL without port", []string{"rules", "show", "--redis", "redis://h"}, "is not host:port"},
		{"URL with a password in its query", []string{"rules", "show", "--redis", "redis://h:6379?password=p"}, "the option password is refused"},
		{"URL with a bad database", []string{"rules", "show", "--redis", "redis://h:6379/x"}, "database must be a number"},
		{"cluster URL with a bad node", []string{"rules", "show", "--redis", "redis-cluster://h:7000,nope"}, `"nope" is not host:port`},
		{"prefix with a brace", []string{"rules", "show", nobody, "--prefix", "app{x}:"}, "--prefix"},
		{"prefix too long", []string{"rules", "show", nobody, "--prefix", strings.Repeat("p", 300)}, "--prefix"},
		{"timeout zero", []string{"rules", "show", nobody, "--timeout", "0s"}, "--timeout 0s"},
		{"timeout not a duration", []string{"rules", "show", nobody, "--timeout", "soon"}, "invalid value \"soon\" for flag -timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ratewarden(t, nil, tt.args...)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.stderr, tt.want)
			assert.Contains(t, r.stderr, "run 'ratewarden -h' for the commands")
			if len(tt.args) > 0 {
				assert.Empty(t, r.stdout)
			}
		})
	}
}

// -h, on the tool, a group and every command, prints help on standard
// output and exits 0; so does a bad URL in $RATEWARDEN_REDIS not matter to
// it.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := ratewarden(t, nil, "-h")
	assert.Equal(t, exitOK, r.code)
	for _, c := range commands {
		assert.Contains(t, r.stdout, c.name, "the usage lists every command")
	}
	assert.Contains(t, r.stdout, "Exit status: 0 done")
	assert.Empty(t, r.stderr)

	for group, others := range map[string]string{"rules": "key show", "key": "rules push"} {
		r = ratewarden(t, nil, group, "--help")
		assert.Equal(t, exitOK, r.code)
		assert.True(t, strings.HasPrefix(r.stdout, "usage: ratewarden "+group+" COMMAND"), "the group's own usage: %s", r.stdout)
		for _, c := range commands {
			if strings.HasPrefix(c.name, group+" ") {
				assert.Contains(t, r.stdout, "  "+c.name, "the group's usage lists its commands")
			}
		}
		assert.NotContains(t, r.stdout, others, "and only its own")
		assert.Contains(t, r.stdout, "--redis URL")
		assert.Empty(t, r.stderr)
	}

	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.name), "-h")
			r := ratewarden(t, []string{"RATEWARDEN_REDIS=nonsense"}, args...)
			assert.Equal(t, exitOK, r.code)
			assert.True(t, strings.HasPrefix(r.stdout, "usage: ratewarden "+c.name), r.stdout)
			assert.Contains(t, r.stdout, strings.TrimSpace(c.long)[:40])
			assert.Equal(t, c.redis, strings.Contains(r.stdout, "-redis URL"), "Redis flags only where Redis is used")
			assert.Empty(t, r.stderr)
		})
	}
}

// rules validate checks a file without Redis: valid, invalid (every problem
// with its position), missing, empty, too large, of a newer schema.
func TestValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	empty := write("empty.yaml", "")
	huge := write("huge.yaml", "schema: 1\n#"+strings.Repeat("x", 10<<20)+"\n")
	newer := write("newer.yaml", "schema: 2\nversion: 1\npolicies:\n  - {name: api, limits: [1/s]}\n")
	tests := []struct {
		name   string
		file   string
		code   int
		stdout string
		stderr []string
	}{
		{"valid", "testdata/rules.yaml", exitOK, "testdata/rules.yaml: valid: " + fileIdentity(t, "testdata/rules.yaml") + ", 4 policies\n", nil},
		{"invalid", "testdata/invalid.yaml", exitProblems, "", []string{
			"testdata/invalid.yaml:5:14: policies[0].limits[0]: ",
			"testdata/invalid.yaml:6:11: policies[1].name: duplicate policy name \"api\"",
			"testdata/invalid.yaml:7:16: policies[1].algorithm: ",
			"testdata/invalid.yaml: 3 problems\n",
		}},
		{"missing", filepath.Join(dir, "missing.yaml"), exitProblems, "", []string{"no such file or directory"}},
		{"a directory", dir, exitProblems, "", []string{"is a directory"}},
		{"empty", empty, exitProblems, "", []string{empty + ":1:", "1 problem\n"}},
		{"larger than 4 MiB", huge, exitProblems, "", []string{"4 MiB"}},
		{"newer schema", newer, exitProblems, "", []string{newer + ":1:", "schema"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ratewarden(t, nil, "rules", "validate", tt.file)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Equal(t, tt.stdout, r.stdout)
			for _, w := range tt.stderr {
				assert.Contains(t, r.stderr, w)
			}
			if tt.code == exitOK {
				assert.Empty(t, r.stderr)
			}
		})
	}
}

// Flags go anywhere after the command, and "--" ends them: a file may be
// named like a flag.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "-x.yaml"), []byte("schema: 1\nversion: 3\npolicies:\n  - {name: api, limits: [1/s]}\n"), 0o644))
	cmd := ratewardenIn(t, dir, "rules", "validate", "--", "-x.yaml")
	assert.Equal(t, exitOK, cmd.code, cmd.stderr)
	assert.Equal(t, "-x.yaml: valid: "+fileIdentity(t, filepath.Join(dir, "-x.yaml"))+", 1 policy\n", cmd.stdout)
}

// ratewardenIn runs the tool in dir.
func ratewardenIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	return ratewarden(t, nil, args...)
}
