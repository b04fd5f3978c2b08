//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

// tryLock never locks where there is no flock: every run then uses a folder
// of its own.
func tryLock(string) (unlock func(), ok bool) { return nil, false }
