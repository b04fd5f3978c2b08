package modproxy

import (
	"archive/zip"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// tree writes a small workspace into a fresh folder: module example.com/Org/m
// (mixed case, so its proxy path is escaped) with a package, an internal
// package, a .git folder and a nested module example.com/Org/m/sub that
// requires it.
func tree(t *testing.T, subRequires string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":               "go 1.26.0\n\nuse (\n\t./m\n\t./m/sub\n)\n",
		"m/go.mod":              "module example.com/Org/m\n\ngo 1.26.0\n",
		"m/m.go":                "package m\n\n// M is one.\nconst M = 1\n",
		"m/internal/x/x.go":     "package x\n",
		"m/README.md":           "m\n",
		"m/.git/config":         "[core]\n",
		"m/sub/go.mod":          "module example.com/Org/m/sub\n\ngo 1.26.0\n\nrequire example.com/Org/m " + subRequires + "\n\nreplace example.com/Org/m => ..\n",
		"m/sub/sub.go":          "package sub\n\nimport _ \"example.com/Org/m\"\n",
		"m/sub/testdata/a.json": "{}\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var at = time.Date(2025, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))

// build loads the tree's workspace and writes its proxy at v0.1.0.
func build(t *testing.T) (root, proxy string, mods []Module) {
	t.Helper()
	root = tree(t, "v0.1.0")
	mods, err := LoadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckRelease(mods, "v0.1.0"); err != nil {
		t.Fatal(err)
	}
	proxy = filepath.Join(t.TempDir(), "proxy")
	if err := Write(proxy, "v0.1.0", at, mods...); err != nil {
		t.Fatal(err)
	}
	return root, proxy, mods
}

func read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func zipNames(t *testing.T, name string) []string {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

func TestLoadWorkspace(t *testing.T) {
	_, _, mods := build(t)
	if len(mods) != 2 || mods[0].Path != "example.com/Org/m" || mods[1].Path != "example.com/Org/m/sub" {
		t.Fatalf("modules = %+v", mods)
	}
	if mods[1].Go != "1.26.0" || len(mods[1].Requires) != 1 || mods[1].Requires[0].Version != "v0.1.0" {
		t.Fatalf("sub = %+v", mods[1])
	}
}

func TestWriteLayout(t *testing.T) {
	root, proxy, _ := build(t)
	vdir := filepath.Join(proxy, "example.com", "!org", "m", "@v")
	if got := read(t, filepath.Join(vdir, "list")); got != "v0.1.0\n" {
		t.Errorf("list = %q", got)
	}
	if got, want := read(t, filepath.Join(vdir, "v0.1.0.mod")), read(t, filepath.Join(root, "m", "go.mod")); got != want {
		t.Errorf(".mod = %q, want go.mod %q", got, want)
	}
	var info struct {
		Version string
		Time    time.Time
	}
	if err := json.Unmarshal([]byte(read(t, filepath.Join(vdir, "v0.1.0.info"))), &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != "v0.1.0" || !info.Time.Equal(at.Truncate(time.Second)) {
		t.Errorf(".info = %+v", info)
	}
	zipName := filepath.Join(vdir, "v0.1.0.zip")
	want := []string{
		"example.com/!org/m@v0.1.0/README.md",
		"example.com/!org/m@v0.1.0/go.mod",
		"example.com/!org/m@v0.1.0/internal/x/x.go",
		"example.com/!org/m@v0.1.0/m.go",
	}
	// Zip entries carry the module path as written, not escaped.
	for i := range want {
		want[i] = strings.Replace(want[i], "!org", "Org", 1)
	}
	if got := zipNames(t, zipName); !slices.Equal(got, want) {
		t.Errorf("zip holds %q, want %q (no .git, no nested module)", got, want)
	}
	mv := module.Version{Path: "example.com/Org/m", Version: "v0.1.0"}
	if _, err := modzip.CheckZip(mv, zipName); err != nil {
		t.Errorf("CheckZip: %v", err)
	}
	subZip := filepath.Join(proxy, "example.com", "!org", "m", "sub", "@v", "v0.1.0.zip")
	if got := zipNames(t, subZip); len(got) != 3 {
		t.Errorf("sub zip holds %q, want go.mod, sub.go, testdata/a.json", got)
	}
}

func TestWriteKeepsOtherVersions(t *testing.T) {
	_, proxy, mods := build(t)
	if err := Write(proxy, "v0.2.0", at, mods[0]); err != nil {
		t.Fatal(err)
	}
	if err := Write(proxy, "v0.1.0", at, mods[0]); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(proxy, "example.com", "!org", "m", "@v", "list")
	if got := read(t, list); got != "v0.1.0\nv0.2.0\n" {
		t.Errorf("list = %q", got)
	}
}

func TestBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"Load of a missing folder", func() error { _, err := Load(missing); return err }, "module folder: stat " + missing},
		{"Load of a folder with no go.mod", func() error { _, err := Load(t.TempDir()); return err }, "no module in"},
		{"LoadWorkspace with no go.work", func() error { _, err := LoadWorkspace(t.TempDir()); return err }, "workspace: open"},
		{"Write of a module whose folder is gone", func() error {
			return Write(t.TempDir(), "v0.1.0", at, Module{Path: "example.com/gone", Dir: missing})
		}, "example.com/gone@v0.1.0: module folder: stat " + missing},
		{"Write at a version that is not canonical", func() error {
			return Write(t.TempDir(), "v0.1", at, Module{Path: "example.com/m", Dir: t.TempDir()})
		}, `version "v0.1" is not a canonical`},
		{"Write of a v2 path at v0.1.0", func() error {
			return Write(t.TempDir(), "v0.1.0", at, Module{Path: "example.com/m/v2", Dir: t.TempDir()})
		}, "example.com/m/v2@v0.1.0"},
	}
	for _, c := range cases {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestLoadWorkspaceMissingModule(t *testing.T) {
	root := tree(t, "v0.1.0")
	if err := os.RemoveAll(filepath.Join(root, "m", "sub")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWorkspace(root)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "m", "sub")) {
		t.Fatalf("error %v, want one naming the missing m/sub", err)
	}
}

func TestCheckRelease(t *testing.T) {
	root := tree(t, "v0.0.0-00010101000000-000000000000")
	mods, err := LoadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	mods[0].Go = "1.25.0"
	err = CheckRelease(mods, "v0.1.0")
	if err == nil {
		t.Fatal("CheckRelease passed a pseudo-version requirement and two go lines")
	}
	for _, want := range []string{
		`example.com/Org/m/sub: go line "1.26.0", but example.com/Org/m has "1.25.0"`,
		"example.com/Org/m/sub requires example.com/Org/m v0.0.0-00010101000000-000000000000, want v0.1.0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestGoCommandReadsTheProxy has the go command itself download both modules
// from the proxy, so the layout is the one it expects.
func TestGoCommandReadsTheProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	_, proxy, _ := build(t)
	cmd := exec.Command("go", "mod", "download", "-json", "example.com/Org/m/sub@v0.1.0", "example.com/Org/m@v0.1.0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"GOWORK=off", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GONOSUMDB=example.com",
		"GOPRIVATE=", "GONOPROXY=", "GOMODCACHE="+t.TempDir(),
		"GOPROXY="+(&url.URL{Scheme: "file", Path: filepath.ToSlash(proxy)}).String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	if strings.Contains(string(out), `"Error"`) {
		t.Fatalf("go mod download reported an error:\n%s", out)
	}
}
