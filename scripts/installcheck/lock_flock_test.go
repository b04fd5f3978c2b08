//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"path/filepath"
	"testing"
)

// Where flock exists, a held lock keeps a second taker out until it is
// released.
func TestTryLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	unlock, ok := tryLock(name)
	if !ok {
		t.Fatal("tryLock failed on a free lock")
	}
	if _, again := tryLock(name); again {
		t.Fatal("a second tryLock took a held lock")
	}
	unlock()
	unlock2, ok := tryLock(name)
	if !ok {
		t.Fatal("tryLock failed after unlock")
	}
	unlock2()
}
