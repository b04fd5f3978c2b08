package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The operator's tool, installed as its README says: go install
// PACKAGE@VERSION.
const (
	toolModule  = root + "/cmd/ratewarden"
	toolPackage = toolModule
	toolName    = "ratewarden"
)

// toolRules is the small rules file the installed tool validates.
const toolRules = `schema: 1
version: 1
policies:
  - {name: login, match: {methods: [POST], paths: [/login]}, limits: [5/m], count: failures}
  - {name: api, match: {prefixes: [/api]}, key: {header: X-API-Key}, limits: [100/s]}
`

// installTool installs the operator's tool at version with `go install`, as a
// user outside the repository would (env: no workspace, the release proxy),
// into a GOBIN of its own under dir, then runs it: `ratewarden -h` must
// answer, and `ratewarden rules validate` must find a small rules file valid.
func installTool(ctx context.Context, dir, version string, env []string) error {
	start := time.Now()
	gobin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		return err
	}
	// go install PACKAGE@VERSION takes no -mod flag; the check's GOFLAGS
	// has one for the programs' builds.
	env = append(env, "GOBIN="+gobin, "GOFLAGS=")
	if _, err := runGo(ctx, dir, env, "install", toolPackage+"@"+version); err != nil {
		return err
	}
	fmt.Printf("installcheck: %s: go install %s@%s: ok (%.1f s)\n", toolName, toolPackage, version, time.Since(start).Seconds())
	bin := filepath.Join(gobin, toolName)
	usage, err := runTool(ctx, dir, bin, "-h")
	if err != nil {
		return err
	}
	if !strings.Contains(usage, "rules validate FILE") {
		return fmt.Errorf("%s -h printed no usage of rules validate:\n%s", toolName, usage)
	}
	file := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(file, []byte(toolRules), 0o644); err != nil {
		return err
	}
	out, err := runTool(ctx, dir, bin, "rules", "validate", file)
	if err != nil {
		return err
	}
	if want := regexp.QuoteMeta(file) + `: valid: version 1, digest [0-9a-f]{12}, 2 policies\n`; !regexp.MustCompile(want).MatchString(out) {
		return fmt.Errorf("%s rules validate printed %q, want a match of %q", toolName, out, want)
	}
	fmt.Printf("installcheck: %s: -h and rules validate: ok\n", toolName)
	return nil
}

// runTool runs the installed tool in dir and returns what it printed, both
// streams; an error carries the command and its output.
func runTool(ctx context.Context, dir, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
