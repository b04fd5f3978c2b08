// Package must holds the assertions of package expect that stop the test:
// each one fails the test as its expect twin does (same check, same
// message) and then calls t.FailNow, so it must run on the test's own
// goroutine.
package must

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/expect"
)

// Contains stops the test unless s (a string, map, slice or array) holds
// element: a substring, a key or an equal element.
func Contains(t testing.TB, s, element any, msg ...any) {
	t.Helper()
	if !expect.Contains(t, s, element, msg...) {
		t.FailNow()
	}
}

// ElementsMatch stops the test unless two lists hold equal elements, each
// as many times, in any order.
func ElementsMatch(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !expect.ElementsMatch(t, want, got, msg...) {
		t.FailNow()
	}
}

// Empty stops the test unless v is empty: a zero value, an empty chan, map
// or slice, or a pointer to an empty value.
func Empty(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.Empty(t, v, msg...) {
		t.FailNow()
	}
}

// Equal stops the test unless got equals want (reflect.DeepEqual; byte
// slices by content).
func Equal(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !expect.Equal(t, want, got, msg...) {
		t.FailNow()
	}
}

// Error stops the test unless err is not nil.
func Error(t testing.TB, err error, msg ...any) {
	t.Helper()
	if !expect.Error(t, err, msg...) {
		t.FailNow()
	}
}

// ErrorAs stops the test unless errors.As(err, target).
func ErrorAs(t testing.TB, err error, target any, msg ...any) {
	t.Helper()
	if !expect.ErrorAs(t, err, target, msg...) {
		t.FailNow()
	}
}

// ErrorContains stops the test unless err is not nil and its text contains
// text.
func ErrorContains(t testing.TB, err error, text string, msg ...any) {
	t.Helper()
	if !expect.ErrorContains(t, err, text, msg...) {
		t.FailNow()
	}
}

// ErrorIs stops the test unless errors.Is(err, target).
func ErrorIs(t testing.TB, err, target error, msg ...any) {
	t.Helper()
	if !expect.ErrorIs(t, err, target, msg...) {
		t.FailNow()
	}
}

// False stops the test unless value is false.
func False(t testing.TB, value bool, msg ...any) {
	t.Helper()
	if !expect.False(t, value, msg...) {
		t.FailNow()
	}
}

// FileExists stops the test unless path names a file that is not a
// directory.
func FileExists(t testing.TB, path string, msg ...any) {
	t.Helper()
	if !expect.FileExists(t, path, msg...) {
		t.FailNow()
	}
}

// Greater stops the test unless a > b (two values of one ordered type).
func Greater(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if !expect.Greater(t, a, b, msg...) {
		t.FailNow()
	}
}

// GreaterOrEqual stops the test unless a >= b (two values of one ordered
// type).
func GreaterOrEqual(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if !expect.GreaterOrEqual(t, a, b, msg...) {
		t.FailNow()
	}
}

// InDelta stops the test unless two numbers differ by at most delta.
func InDelta(t testing.TB, want, got any, delta float64, msg ...any) {
	t.Helper()
	if !expect.InDelta(t, want, got, delta, msg...) {
		t.FailNow()
	}
}

// InEpsilon stops the test unless got differs from want by at most epsilon
// times |want| (want must not be zero).
func InEpsilon(t testing.TB, want, got any, epsilon float64, msg ...any) {
	t.Helper()
	if !expect.InEpsilon(t, want, got, epsilon, msg...) {
		t.FailNow()
	}
}

// JSONEq stops the test unless two JSON documents hold equal values.
func JSONEq(t testing.TB, want, got string, msg ...any) {
	t.Helper()
	if !expect.JSONEq(t, want, got, msg...) {
		t.FailNow()
	}
}

// Len stops the test unless len(v) is n.
func Len(t testing.TB, v any, n int, msg ...any) {
	t.Helper()
	if !expect.Len(t, v, n, msg...) {
		t.FailNow()
	}
}

// Less stops the test unless a < b (two values of one ordered type).
func Less(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if !expect.Less(t, a, b, msg...) {
		t.FailNow()
	}
}

// LessOrEqual stops the test unless a <= b (two values of one ordered
// type).
func LessOrEqual(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if !expect.LessOrEqual(t, a, b, msg...) {
		t.FailNow()
	}
}

// Nil stops the test unless v is nil (a nil pointer, map, slice... counts).
func Nil(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.Nil(t, v, msg...) {
		t.FailNow()
	}
}

// NoError stops the test unless err is nil.
func NoError(t testing.TB, err error, msg ...any) {
	t.Helper()
	if !expect.NoError(t, err, msg...) {
		t.FailNow()
	}
}

// NotContains stops the test unless s (a string, map, slice or array) does
// not hold element.
func NotContains(t testing.TB, s, element any, msg ...any) {
	t.Helper()
	if !expect.NotContains(t, s, element, msg...) {
		t.FailNow()
	}
}

// NotEmpty stops the test unless v is not empty (see Empty).
func NotEmpty(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.NotEmpty(t, v, msg...) {
		t.FailNow()
	}
}

// NotEqual stops the test unless got differs from unwanted.
func NotEqual(t testing.TB, unwanted, got any, msg ...any) {
	t.Helper()
	if !expect.NotEqual(t, unwanted, got, msg...) {
		t.FailNow()
	}
}

// NotErrorIs stops the test unless !errors.Is(err, target).
func NotErrorIs(t testing.TB, err, target error, msg ...any) {
	t.Helper()
	if !expect.NotErrorIs(t, err, target, msg...) {
		t.FailNow()
	}
}

// NotNil stops the test unless v is not nil.
func NotNil(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.NotNil(t, v, msg...) {
		t.FailNow()
	}
}

// Positive stops the test unless v is greater than the zero value of its
// type.
func Positive(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.Positive(t, v, msg...) {
		t.FailNow()
	}
}

// Regexp stops the test unless the text of s matches pattern (a string or a
// *regexp.Regexp).
func Regexp(t testing.TB, pattern, s any, msg ...any) {
	t.Helper()
	if !expect.Regexp(t, pattern, s, msg...) {
		t.FailNow()
	}
}

// Same stops the test unless got and want are pointers of one type to one
// variable.
func Same(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !expect.Same(t, want, got, msg...) {
		t.FailNow()
	}
}

// True stops the test unless value is true.
func True(t testing.TB, value bool, msg ...any) {
	t.Helper()
	if !expect.True(t, value, msg...) {
		t.FailNow()
	}
}

// WithinDuration stops the test unless two times are at most delta apart.
func WithinDuration(t testing.TB, want, got time.Time, delta time.Duration, msg ...any) {
	t.Helper()
	if !expect.WithinDuration(t, want, got, delta, msg...) {
		t.FailNow()
	}
}

// Zero stops the test unless v is nil or the zero value of its type.
func Zero(t testing.TB, v any, msg ...any) {
	t.Helper()
	if !expect.Zero(t, v, msg...) {
		t.FailNow()
	}
}

// Eventually stops the test unless condition returns true within waitFor,
// calling it every tick (see expect.Eventually).
func Eventually(t testing.TB, condition func() bool, waitFor, tick time.Duration, msg ...any) {
	t.Helper()
	if !expect.Eventually(t, condition, waitFor, tick, msg...) {
		t.FailNow()
	}
}

// NotPanics stops the test unless f returns without panicking.
func NotPanics(t testing.TB, f func(), msg ...any) {
	t.Helper()
	if !expect.NotPanics(t, f, msg...) {
		t.FailNow()
	}
}

// Panics stops the test unless f panics.
func Panics(t testing.TB, f func(), msg ...any) {
	t.Helper()
	if !expect.Panics(t, f, msg...) {
		t.FailNow()
	}
}

// PanicsWithValue stops the test unless f panics with a value equal to
// want.
func PanicsWithValue(t testing.TB, want any, f func(), msg ...any) {
	t.Helper()
	if !expect.PanicsWithValue(t, want, f, msg...) {
		t.FailNow()
	}
}
