// Package modproxy writes a file-based Go module proxy for the modules of a
// working tree: the GOPROXY protocol's layout on disk, so that
// GOPROXY=file://DIR serves those modules at one version as if they had been
// tagged and published.
//
// For a module path P and a version V it writes, under DIR/escape(P)/@v/:
//
//	list     the known versions, one a line
//	V.info   {"Version":"V","Time":"..."}
//	V.mod    the module's go.mod, byte for byte
//	V.zip    the module zip, made by golang.org/x/mod/zip.CreateFromDir
//
// CreateFromDir decides what goes into the zip the way the go command does:
// nested modules, VCS folders, most of vendor and irregular files are left
// out. It takes the directory as it is, so files that git ignores are
// included if they are present.
package modproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// Module is one module of a working tree: its path and go line as its go.mod
// declares them, the folder that holds it and the modules it requires.
type Module struct {
	Path     string           // module path, from the module line
	Dir      string           // folder holding go.mod
	Go       string           // go line ("" when there is none)
	Requires []module.Version // require directives, indirect ones included
	GoMod    []byte           // go.mod as read, served as the .mod file
}

// Load reads the module whose go.mod is in dir.
func Load(dir string) (Module, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return Module{}, fmt.Errorf("modproxy: module folder: %w", err)
	}
	if !info.IsDir() {
		return Module{}, fmt.Errorf("modproxy: module folder %s is not a directory", dir)
	}
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return Module{}, fmt.Errorf("modproxy: no module in %s: %w", dir, err)
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return Module{}, fmt.Errorf("modproxy: %w", err)
	}
	if f.Module == nil || f.Module.Mod.Path == "" {
		return Module{}, fmt.Errorf("modproxy: %s has no module line", name)
	}
	m := Module{Path: f.Module.Mod.Path, Dir: dir, GoMod: data}
	if f.Go != nil {
		m.Go = f.Go.Version
	}
	for _, r := range f.Require {
		m.Requires = append(m.Requires, r.Mod)
	}
	return m, nil
}

// LoadWorkspace reads root/go.work and loads every module it uses, in the
// order of its use directives.
func LoadWorkspace(root string) ([]Module, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("modproxy: workspace: %w", err)
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("modproxy: %w", err)
	}
	if len(wf.Use) == 0 {
		return nil, fmt.Errorf("modproxy: %s uses no module", name)
	}
	mods := make([]Module, 0, len(wf.Use))
	for _, u := range wf.Use {
		dir := filepath.FromSlash(u.Path)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		m, err := Load(dir)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// CheckRelease reports, in one error, every way mods are not ready to be
// released together at version: go lines that differ, and requirements of one
// module of mods on another at any version but this one (a pseudo-version
// left from development, a forgotten bump).
func CheckRelease(mods []Module, version string) error {
	ours := make(map[string]bool, len(mods))
	for _, m := range mods {
		ours[m.Path] = true
	}
	var errs []error
	for _, m := range mods {
		if m.Go != mods[0].Go {
			errs = append(errs, fmt.Errorf("%s: go line %q, but %s has %q (one go line for every module)",
				m.Path, m.Go, mods[0].Path, mods[0].Go))
		}
		for _, r := range m.Requires {
			if ours[r.Path] && r.Version != version {
				errs = append(errs, fmt.Errorf("%s requires %s %s, want %s", m.Path, r.Path, r.Version, version))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("modproxy: not releasable at %s:\n%w", version, errors.Join(errs...))
	}
	return nil
}

// Write adds every module of mods at version to the proxy in dir (created if
// need be), stamping the .info files with at. A module already in the proxy
// at that version is replaced; other versions in its list are kept.
func Write(dir, version string, at time.Time, mods ...Module) error {
	if version != semver.Canonical(version) {
		return fmt.Errorf("modproxy: version %q is not a canonical semantic version such as v0.1.0", version)
	}
	for _, m := range mods {
		if err := writeModule(dir, version, at, m); err != nil {
			return fmt.Errorf("modproxy: %s@%s: %w", m.Path, version, err)
		}
	}
	return nil
}

func writeModule(dir, version string, at time.Time, m Module) error {
	mv := module.Version{Path: m.Path, Version: version}
	if err := module.Check(mv.Path, mv.Version); err != nil {
		return err
	}
	if info, err := os.Stat(m.Dir); err != nil {
		return fmt.Errorf("module folder: %w", err)
	} else if !info.IsDir() {
		return fmt.Errorf("module folder %s is not a directory", m.Dir)
	}
	escPath, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(mv.Version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(vdir, escVer)
	if err := writeZip(base+".zip", mv, m.Dir); err != nil {
		return err
	}
	if err := os.WriteFile(base+".mod", m.GoMod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{mv.Version, at.UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", append(info, '\n'), 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(vdir, "list"), mv.Version)
}

// writeZip writes the module zip of mv from folder src to name, through a
// temporary file so that a failure never leaves a partial zip behind.
func writeZip(name string, mv module.Version, src string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), ".zip-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = zip.CreateFromDir(f, mv, src); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// addToList adds version to the list file name, keeping it sorted by semantic
// version and free of duplicates.
func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
