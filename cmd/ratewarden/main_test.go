package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tool is the ratewarden binary the tests run, built once by TestMain.
var tool string

// TestMain builds the tool into a temporary directory (with the race
// detector when the tests have it), so that the tests run it as an operator
// does: a process, its output and its exit status.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ratewarden-tool")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tool = filepath.Join(dir, "ratewarden")
	args := []string{"build", "-o", tool}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the tool did.
type result struct {
	stdout, stderr string
	code           int
}

// ratewarden runs the tool with args, without $RATEWARDEN_REDIS unless env
// sets it, and returns what it did; a run longer than a minute fails t.
func ratewarden(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tool, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATEWARDEN_REDIS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("ratewarden %s: still running after a minute", strings.Join(args, " "))
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}
