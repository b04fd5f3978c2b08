package main

import (
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/module"

	"github.com/ratewarden/ratewarden/scripts/installcheck/modproxy"
)

const listing = `/tmp/x/stdhttp: go1.26.8
	path	installcheck.test/stdhttp
	mod	installcheck.test/stdhttp	(devel)	
	dep	github.com/golang-jwt/jwt/v5	v5.3.1	h1:kYf8=
	dep	github.com/ratewarden/ratewarden	v0.1.0	h1:YAsi=
	dep	github.com/redis/rueidis	v1.0.79	h1:abc=
	dep	github.com/valyala/fasthttpx	v1.0.0	h1:abc=
	dep	example.com/fork	v1.0.0
	=>	github.com/gin-gonic/gin	v1.12.0	h1:abc=
	build	-compiler=gc
`

func TestForbiddenDeps(t *testing.T) {
	got := forbiddenDeps(listing, apps[0].forbidden)
	want := []string{"github.com/golang-jwt/jwt/v5", "github.com/gin-gonic/gin"}
	if !slices.Equal(got, want) {
		t.Errorf("forbiddenDeps = %q, want %q (a prefix ends at a /, and => lines count)", got, want)
	}
	clean := strings.ReplaceAll(strings.ReplaceAll(listing, "golang-jwt", "x"), "gin-gonic", "x")
	if got := forbiddenDeps(clean, apps[0].forbidden); len(got) != 0 {
		t.Errorf("forbiddenDeps of a clean listing = %q", got)
	}
}

// TestAppSources keeps the programs compilable-looking, formatted, and using
// the module they get.
func TestAppSources(t *testing.T) {
	names := map[string]bool{}
	for _, a := range apps {
		if names[a.name] {
			t.Errorf("two programs named %s", a.name)
		}
		names[a.name] = true
		f, err := parser.ParseFile(token.NewFileSet(), a.name+".go", a.source, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", a.name, err)
			continue
		}
		uses := false
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			uses = uses || p == a.module || strings.HasPrefix(p, a.module+"/")
		}
		if !uses {
			t.Errorf("%s: imports nothing of %s, the module it gets", a.name, a.module)
		}
		if out, err := format.Source([]byte(a.source)); err != nil || string(out) != a.source {
			t.Errorf("%s: source is not gofmt-formatted (%v)", a.name, err)
		}
	}
}

func TestCheckApps(t *testing.T) {
	mods := []modproxy.Module{{Path: root}, {Path: root + "/rules"}, {Path: toolModule}}
	if err := checkApps(apps[:2], mods); err != nil {
		t.Errorf("checkApps(stdhttp and rules, with the tool) = %v", err)
	}
	err := checkApps(apps, mods)
	if err == nil || !strings.Contains(err.Error(), "program ginmw gets "+root+"/ginmw, which is not a module of go.work") {
		t.Errorf("checkApps without ginmw = %v", err)
	}
	err = checkApps(apps[:2], mods[:2])
	if err == nil || !strings.Contains(err.Error(), "the tool ratewarden is installed from "+toolModule+", which is not a module of go.work") {
		t.Errorf("checkApps without the tool = %v", err)
	}
}

// The programs of net/http users, with rules or without, must not pull the
// other frameworks, JWT, Redis or metrics modules.
func TestNetHTTPProgramsForbidden(t *testing.T) {
	for _, a := range apps {
		if a.name == "stdhttp" || a.name == "rules" {
			if !slices.Equal(a.forbidden, netHTTPForbidden) {
				t.Errorf("%s forbids %q, want %q", a.name, a.forbidden, netHTTPForbidden)
			}
		}
	}
}

func TestProxyList(t *testing.T) {
	cache := t.TempDir()
	dl := filepath.Join(cache, "cache", "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	got := proxyList("/p", goEnv{proxy: "off", modcache: cache})
	if want := "file:///p,file://" + filepath.ToSlash(dl) + ",off"; got != want {
		t.Errorf("proxyList = %q, want %q", got, want)
	}
	got = proxyList("/p", goEnv{modcache: filepath.Join(cache, "none")})
	if got != "file:///p" {
		t.Errorf("proxyList with no user proxy and no download cache = %q, want only the release proxy", got)
	}
}

func TestCheckEnvOverrides(t *testing.T) {
	base := []string{"GOWORK=/w/go.work", "GOFLAGS=-race", "GOPRIVATE=github.com/ratewarden", "HOME=/h"}
	env := checkEnv(base, "file:///p", "/m")
	last := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		last[k] = v // exec uses the last value of a key
	}
	want := map[string]string{
		"GOWORK": "off", "GOFLAGS": "-mod=mod", "GOPRIVATE": "", "GONOPROXY": "", "HOME": "/h",
		"GOPROXY": "file:///p", "GOMODCACHE": "/m", "GONOSUMDB": "github.com/ratewarden", "GOTOOLCHAIN": "local",
		"GODEBUG": "goindex=0",
	}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("%s = %q, want %q", k, last[k], v)
		}
	}
	if base[0] != "GOWORK=/w/go.work" || len(base) != 4 {
		t.Errorf("checkEnv changed its base: %q", base)
	}
}

func TestReleaseVersion(t *testing.T) {
	mods := []modproxy.Module{
		{Path: root},
		{Path: root + "/ginmw", Requires: []module.Version{{Path: "github.com/gin-gonic/gin", Version: "v1.12.0"}, {Path: root, Version: "v0.3.1"}}},
	}
	if v, err := releaseVersion(mods); v != "v0.3.1" || err != nil {
		t.Errorf("releaseVersion = %q, %v; want v0.3.1", v, err)
	}
	if _, err := releaseVersion(mods[:1]); err == nil || !strings.Contains(err.Error(), "-version") {
		t.Errorf("releaseVersion with no requirement on the root = %v, want an error pointing at -version", err)
	}
}
