package expect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// ErrForTesting is an error for tests that need one no code returns.
var ErrForTesting = errors.New("expect.ErrForTesting: an error no code returns")

// describe prints an error with its type.
func describe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T)", err.Error(), err)
}

// NoError checks that err is nil.
func NoError(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err == nil {
		return true
	}
	return report(t, "unexpected error: "+describe(err), msg)
}

// Error checks that err is not nil.
func Error(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err != nil {
		return true
	}
	return report(t, "want an error, got nil", msg)
}

// ErrorIs checks that errors.Is(err, target).
func ErrorIs(t testing.TB, err, target error, msg ...any) bool {
	t.Helper()
	if errors.Is(err, target) {
		return true
	}
	return report(t, "error is not the target\n\twant: "+describe(target)+"\n\tgot:  "+describe(err), msg)
}

// NotErrorIs checks that !errors.Is(err, target).
func NotErrorIs(t testing.TB, err, target error, msg ...any) bool {
	t.Helper()
	if !errors.Is(err, target) {
		return true
	}
	return report(t, "error should not be "+describe(target)+"\n\tgot:  "+describe(err), msg)
}

// ErrorAs checks that errors.As(err, target).
func ErrorAs(t testing.TB, err error, target any, msg ...any) bool {
	t.Helper()
	if errors.As(err, target) {
		return true
	}
	return report(t, fmt.Sprintf("no error in the chain is a %T\n\tgot:  %s", target, describe(err)), msg)
}

// ErrorContains checks that err is not nil and its text contains text.
func ErrorContains(t testing.TB, err error, text string, msg ...any) bool {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), text) {
		return true
	}
	return report(t, fmt.Sprintf("want an error containing %q\n\tgot:  %s", text, describe(err)), msg)
}
