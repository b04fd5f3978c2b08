package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// workDir returns the folder for this run's proxy, programs and module cache,
// and a function to call when the run is over.
//
// The go command keys the compiled packages in its build cache by the folder
// they were compiled in, so a module cache at a new place on every run would
// recompile every framework and client every time. The folder is therefore
// the same on every run, os.TempDir()/ratewarden-installcheck, emptied before
// and after use: the module cache in it is fresh on every run, but its path
// is stable and later runs find their compiled packages. A lock (dropped by
// the kernel even if this process is killed) keeps two runs out of each
// other's way; a run that cannot take it, or runs where there is no such
// lock, uses a new folder of its own and compiles everything.
func workDir() (dir string, done func(), err error) {
	stable := filepath.Join(os.TempDir(), "ratewarden-installcheck")
	if unlock, ok := tryLock(stable + ".lock"); ok {
		return stable, unlock, nil
	}
	dir, err = os.MkdirTemp("", "ratewarden-installcheck-")
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("installcheck: %s is in use by another run: using %s, which has nothing compiled yet\n", stable, dir)
	return dir, func() {}, nil
}
