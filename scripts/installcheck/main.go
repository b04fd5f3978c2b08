// Command installcheck proves that a user outside this repository can install
// every ratewarden module at its release version, with none of the replace
// directives and none of the go.work that tie the modules together here.
//
// It publishes the working tree's modules at the release version into a
// file-based module proxy in a temporary folder (see package modproxy), then,
// for each adapter, Redis binding and metrics module and for the rules
// module, writes a tiny program in a module of its own, runs
// `go get MODULE@VERSION` and `go build` with
//
//	GOWORK=off GOFLAGS=-mod=mod GONOSUMDB=github.com/ratewarden
//	GOPROXY=file://PROXY,file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)
//	GOMODCACHE=<a fresh folder, so no stale copy of our modules is ever used>
//
// and reads `go version -m` of the net/http program and of the rules program
// (net/http and a watched rules file): they must hold no module of a
// framework, of golang-jwt, of a Redis client or of a metrics library
// (Prometheus, OpenTelemetry). Last, it installs the operator's tool with
// `go install github.com/ratewarden/ratewarden/cmd/ratewarden@VERSION` into a
// GOBIN of its own and runs `ratewarden -h` and `ratewarden rules validate` on
// a small file. Everything it made is removed at the end (-keep leaves it and
// says where).
//
// Before it builds anything it checks that every module of go.work has the
// same go line and requires the others at the release version.
//
// Usage, from the repository root:
//
//	go run ./scripts/installcheck [-root DIR] [-version vX.Y.Z] [-keep]
//
// The version defaults to the one the submodules require the root module at.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ratewarden/ratewarden/scripts/installcheck/modproxy"
)

// unpublished are the modules of go.work that no user installs, so the proxy
// never holds them: this tool's module and the adapters' rule-driven tests.
var unpublished = map[string]bool{
	root + "/scripts/installcheck": true,
	root + "/testing/conformance":  true,
}

type options struct {
	root    string // repository root, holding go.work
	version string // release version of every module
	keep    bool   // keep the temporary folder
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root (the folder holding go.work)")
	flag.StringVar(&o.version, "version", "", "the version every module is published at (default: the one the submodules require the root at)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (proxy, programs, module cache) and print where it is")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "installcheck: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "installcheck: FAILED: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (err error) {
	start := time.Now()
	mods, err := modproxy.LoadWorkspace(o.root)
	if err != nil {
		return err
	}
	if o.version == "" {
		if o.version, err = releaseVersion(mods); err != nil {
			return err
		}
	}
	if err := modproxy.CheckRelease(mods, o.version); err != nil {
		return err
	}
	published := make([]modproxy.Module, 0, len(mods))
	for _, m := range mods {
		if !unpublished[m.Path] {
			published = append(published, m)
		}
	}
	if err := checkApps(apps, published); err != nil {
		return err
	}
	user, err := userGoEnv(ctx)
	if err != nil {
		return err
	}
	tmp, done, err := workDir()
	if err != nil {
		return err
	}
	defer done()
	env := checkEnv(os.Environ(), proxyList(filepath.Join(tmp, "proxy"), user), filepath.Join(tmp, "modcache"))
	if err := removeTemp(tmp, env); err != nil { // what a killed run left
		return err
	}
	defer func() {
		if o.keep {
			fmt.Printf("installcheck: kept %s\n", tmp)
		} else if rerr := removeTemp(tmp, env); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := modproxy.Write(filepath.Join(tmp, "proxy"), o.version, time.Now(), published...); err != nil {
		return err
	}
	fmt.Printf("installcheck: published %d modules at %s in a file proxy (%.1f s)\n",
		len(published), o.version, time.Since(start).Seconds())
	err = buildApps(ctx, apps, filepath.Join(tmp, "apps"), mods[0].Go, o.version, env)
	if terr := installTool(ctx, filepath.Join(tmp, "tool"), o.version, env); terr != nil {
		fmt.Printf("installcheck: %s: FAILED: %v\n", toolName, terr)
		err = errors.Join(err, fmt.Errorf("%s: %w", toolName, terr))
	}
	fmt.Printf("installcheck: %d programs and the tool in %.1f s\n", len(apps), time.Since(start).Seconds())
	return err
}

// releaseVersion is the version at which the first module that requires the
// root module requires it; CheckRelease then makes sure every module agrees.
func releaseVersion(mods []modproxy.Module) (string, error) {
	for _, m := range mods {
		for _, r := range m.Requires {
			if r.Path == root {
				return r.Version, nil
			}
		}
	}
	return "", fmt.Errorf("no module of go.work requires %s: say which version to check with -version", root)
}

// checkApps makes sure every program gets a module that is published, and
// that the operator's tool is published too.
func checkApps(apps []app, published []modproxy.Module) error {
	isPublished := func(path string) bool {
		for _, m := range published {
			if m.Path == path {
				return true
			}
		}
		return false
	}
	for _, a := range apps {
		if !isPublished(a.module) {
			return fmt.Errorf("program %s gets %s, which is not a module of go.work", a.name, a.module)
		}
	}
	if !isPublished(toolModule) {
		return fmt.Errorf("the tool %s is installed from %s, which is not a module of go.work", toolName, toolModule)
	}
	return nil
}
