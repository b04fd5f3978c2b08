package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// goEnv is what `go env` printed before the check changed anything.
type goEnv struct {
	proxy    string // GOPROXY
	modcache string // GOMODCACHE
}

func userGoEnv(ctx context.Context) (goEnv, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		return goEnv{}, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 {
		return goEnv{}, fmt.Errorf("go env GOPROXY GOMODCACHE printed %q, want two lines", out)
	}
	return goEnv{proxy: lines[0], modcache: lines[1]}, nil
}

// proxyList is the GOPROXY of the check: the release proxy, then the
// downloads the user's module cache already holds (fast, and offline), then
// the user's own GOPROXY for whatever else the programs need. A proxy that
// lacks a module answers "not found" and the go command asks the next one.
func proxyList(release string, user goEnv) string {
	list := []string{fileURL(release)}
	if user.modcache != "" {
		dl := filepath.Join(user.modcache, "cache", "download")
		if info, err := os.Stat(dl); err == nil && info.IsDir() {
			list = append(list, fileURL(dl))
		}
	}
	if user.proxy != "" {
		list = append(list, user.proxy)
	}
	return strings.Join(list, ",")
}

func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// checkEnv is base with the settings of a user outside the repository: no
// workspace, go.mod updated as needed, our modules from goproxy without the
// checksum database (they are not published), and a module cache of its own.
// The module cache sits at the same path every run and our modules keep the
// release version while their files change with the working tree, whereas the
// go command's module index (kept in GOCACHE) assumes that a version's files
// never change: a stale index once hid a new import from the build. So the
// index is off (GODEBUG=goindex=0); the build cache still keys on content.
func checkEnv(base []string, goproxy, modcache string) []string {
	return append(slices.Clip(base),
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"GOPROXY="+goproxy,
		"GONOSUMDB=github.com/ratewarden",
		"GOPRIVATE=",
		"GONOPROXY=",
		"GOMODCACHE="+modcache,
		"GOTOOLCHAIN=local",
		"GODEBUG=goindex=0",
	)
}

// buildApps gets every program's module, all at once (the downloads
// overlap), then builds the programs one after the other (each build uses
// every core, and packages they share are compiled once), then checks the
// binaries. It prints each program's report in order and returns every
// failure.
func buildApps(ctx context.Context, apps []app, dir, goLine, version string, env []string) error {
	start := time.Now()
	errs := make([]error, len(apps))
	var wg sync.WaitGroup
	for i, a := range apps {
		wg.Go(func() { errs[i] = getApp(ctx, a, filepath.Join(dir, a.name), goLine, version, env) })
	}
	wg.Wait()
	fmt.Printf("installcheck: go get of %d modules at %s (%.1f s)\n", len(apps), version, time.Since(start).Seconds())
	for i, a := range apps {
		if errs[i] == nil {
			errs[i] = buildApp(ctx, a, filepath.Join(dir, a.name), env)
		}
		if errs[i] != nil {
			fmt.Printf("installcheck: %s: FAILED: %v\n", a.name, errs[i])
			errs[i] = fmt.Errorf("%s: %w", a.name, errs[i])
		}
	}
	return errors.Join(errs...)
}

// getApp writes program a into dir, in a module of its own, and gets the
// module it uses at version.
func getApp(ctx context.Context, a app, dir, goLine, version string, env []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := fmt.Sprintf("module installcheck.test/%s\n\ngo %s\n", a.name, goLine)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(a.source), 0o644); err != nil {
		return err
	}
	_, err := runGo(ctx, dir, env, "get", a.module+"@"+version)
	return err
}

// buildApp builds program a in dir and checks the modules of its binary.
func buildApp(ctx context.Context, a app, dir string, env []string) error {
	start := time.Now()
	bin := filepath.Join(dir, a.name)
	if _, err := runGo(ctx, dir, env, "build", "-o", bin, "."); err != nil {
		return err
	}
	fmt.Printf("installcheck: %s: go build: ok (%.1f s)\n", a.name, time.Since(start).Seconds())
	if len(a.forbidden) == 0 {
		return nil
	}
	out, err := runGo(ctx, dir, env, "version", "-m", bin)
	if err != nil {
		return err
	}
	fmt.Printf("installcheck: %s: go version -m %s\n%s", a.name, a.name, out)
	if bad := forbiddenDeps(out, a.forbidden); len(bad) > 0 {
		return fmt.Errorf("the binary holds %s; a user of this program must never download them",
			strings.Join(bad, ", "))
	}
	fmt.Printf("installcheck: %s: none of %s: ok\n", a.name, strings.Join(a.forbidden, ", "))
	return nil
}

// runGo runs the go command in dir with env and returns its standard output;
// an error carries the command and everything it printed.
func runGo(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// forbiddenDeps returns the modules of a `go version -m` listing (dep lines
// and their => replacements) that are, or lie below, one of forbidden.
func forbiddenDeps(listing string, forbidden []string) []string {
	var bad []string
	for line := range strings.Lines(listing) {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "dep" && f[0] != "=>") {
			continue
		}
		for _, p := range forbidden {
			if f[1] == p || strings.HasPrefix(f[1], p+"/") {
				bad = append(bad, f[1])
				break
			}
		}
	}
	return bad
}

// removeTemp removes the check's folder, if it is there. Its module cache is
// read-only, as every module cache is, so `go clean -modcache` (with env's
// GOMODCACHE) empties that first.
func removeTemp(dir string, env []string) error {
	cmd := exec.Command("go", "clean", "-modcache")
	cmd.Dir = os.TempDir()
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go clean -modcache in %s: %w\n%s", dir, err, out)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}
