//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on the file name, without waiting for it.
// It reports false when another process holds it. The kernel drops the lock
// when unlock closes the file or when the process dies.
func tryLock(name string) (unlock func(), ok bool) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
