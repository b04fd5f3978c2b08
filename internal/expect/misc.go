package expect

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"
)

// run calls f and returns whether it panicked and with what.
func run(f func()) (panicked bool, value any) {
	panicked = true
	defer func() {
		if panicked {
			value = recover()
		}
	}()
	f()
	return false, nil
}

// Panics checks that f panics.
func Panics(t testing.TB, f func(), msg ...any) bool {
	t.Helper()
	if panicked, _ := run(f); panicked {
		return true
	}
	return report(t, "want a panic, f returned", msg)
}

// PanicsWithValue checks that f panics with a value equal to want.
func PanicsWithValue(t testing.TB, want any, f func(), msg ...any) bool {
	t.Helper()
	panicked, value := run(f)
	if !panicked {
		return report(t, "want a panic with "+show(want)+", f returned", msg)
	}
	if equal(want, value) {
		return true
	}
	return report(t, wantGot("panic value differs", want, value), msg)
}

// NotPanics checks that f returns without panicking.
func NotPanics(t testing.TB, f func(), msg ...any) bool {
	t.Helper()
	if panicked, value := run(f); panicked {
		return report(t, fmt.Sprintf("unexpected panic: %v", value), msg)
	}
	return true
}

// Eventually checks that condition returns true within waitFor, calling
// it every tick (one call at a time, each in its own goroutine so that a
// slow call does not hold back the deadline).
func Eventually(t testing.TB, condition func() bool, waitFor, tick time.Duration, msg ...any) bool {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	result := make(chan bool, 1)
	ticks := ticker.C
	for {
		select {
		case <-deadline.C:
			return report(t, fmt.Sprintf("condition not met within %v", waitFor), msg)
		case <-ticks:
			ticks = nil
			go func() { result <- condition() }()
		case ok := <-result:
			if ok {
				return true
			}
			ticks = ticker.C
		}
	}
}

// Regexp checks that the text of s matches pattern (a string or a
// *regexp.Regexp).
func Regexp(t testing.TB, pattern, s any, msg ...any) bool {
	t.Helper()
	re, ok := pattern.(*regexp.Regexp)
	if !ok {
		re = regexp.MustCompile(fmt.Sprint(pattern))
	}
	text := fmt.Sprint(s)
	if re.MatchString(text) {
		return true
	}
	return report(t, fmt.Sprintf("%q does not match %q", text, re), msg)
}

// FileExists checks that path names a file that is not a directory.
func FileExists(t testing.TB, path string, msg ...any) bool {
	t.Helper()
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		return report(t, "no file "+path+": "+err.Error(), msg)
	case info.IsDir():
		return report(t, path+" is a directory, want a file", msg)
	}
	return true
}
