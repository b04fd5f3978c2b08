package expect_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/expect"
)

// recorder is a testing.TB that keeps the failures it is given.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

type point struct{ X, Y int }

var (
	errTarget  = errors.New("target")
	errWrapped = fmt.Errorf("wrapped: %w", errTarget)
	x, y       = new(int), new(int)
)

// checks pairs a check that must hold with one that must fail, and the
// text the failure must carry.
var checks = []struct {
	name       string
	holds      func(testing.TB) bool
	fails      func(testing.TB) bool
	failureHas string
}{
	{"True", func(t testing.TB) bool { return expect.True(t, true) }, func(t testing.TB) bool { return expect.True(t, false, "step %d", 3) }, "step 3"},
	{"False", func(t testing.TB) bool { return expect.False(t, false) }, func(t testing.TB) bool { return expect.False(t, true, "key k") }, "key k"},
	{"Equal", func(t testing.TB) bool { return expect.Equal(t, point{1, 2}, point{1, 2}) }, func(t testing.TB) bool { return expect.Equal(t, 3, 4) }, "want: 3 (int)\n\tgot:  4 (int)"},
	{"Equal types", func(t testing.TB) bool { return expect.Equal(t, []byte("a"), []byte("a")) }, func(t testing.TB) bool { return expect.Equal(t, int64(3), 3) }, "int64"},
	{"Equal nil bytes", func(t testing.TB) bool { return expect.Equal(t, []byte(nil), []byte(nil)) }, func(t testing.TB) bool { return expect.Equal(t, []byte(nil), []byte{}) }, "not equal"},
	{"NotEqual", func(t testing.TB) bool { return expect.NotEqual(t, 3, 4) }, func(t testing.TB) bool { return expect.NotEqual(t, "a", "a") }, `"a"`},
	{"Nil", func(t testing.TB) bool { return expect.Nil(t, (*int)(nil)) }, func(t testing.TB) bool { return expect.Nil(t, 0) }, "want nil"},
	{"NotNil", func(t testing.TB) bool { return expect.NotNil(t, x) }, func(t testing.TB) bool { return expect.NotNil(t, map[int]int(nil)) }, "got nil"},
	{"Zero", func(t testing.TB) bool { return expect.Zero(t, point{}) }, func(t testing.TB) bool { return expect.Zero(t, time.Second) }, "1000000000"},
	{"Empty", func(t testing.TB) bool { return expect.Empty(t, []int{}) }, func(t testing.TB) bool { return expect.Empty(t, "x") }, `"x"`},
	{"NotEmpty", func(t testing.TB) bool { return expect.NotEmpty(t, map[int]int{1: 1}) }, func(t testing.TB) bool { return expect.NotEmpty(t, new(string)) }, "non-empty"},
	{"Same", func(t testing.TB) bool { return expect.Same(t, x, x) }, func(t testing.TB) bool { return expect.Same(t, x, y) }, "not the same pointer"},
	{"Same values", func(t testing.TB) bool { return expect.Same(t, &x, &x) }, func(t testing.TB) bool { return expect.Same(t, 1, 1) }, "no pointer"},
	{"JSONEq", func(t testing.TB) bool { return expect.JSONEq(t, `{"a":1,"b":2}`, `{"b":2, "a":1}`) }, func(t testing.TB) bool { return expect.JSONEq(t, `{"a":1}`, `{"a":2}`) }, `{"a":2}`},
	{"Len", func(t testing.TB) bool { return expect.Len(t, "abc", 3) }, func(t testing.TB) bool { return expect.Len(t, []int{1}, 2) }, "want length 2, got 1"},
	{"Len no length", func(t testing.TB) bool { return expect.Len(t, map[int]int{}, 0) }, func(t testing.TB) bool { return expect.Len(t, 5, 0) }, "len does not apply"},
	{"Contains", func(t testing.TB) bool { return expect.Contains(t, "hello", "ell") }, func(t testing.TB) bool { return expect.Contains(t, []string{"a"}, "b") }, `does not contain "b"`},
	{"Contains map", func(t testing.TB) bool { return expect.Contains(t, map[string]int{"k": 1}, "k") }, func(t testing.TB) bool { return expect.Contains(t, 5, 5) }, "cannot hold"},
	{"NotContains", func(t testing.TB) bool { return expect.NotContains(t, "hello", "z") }, func(t testing.TB) bool { return expect.NotContains(t, []int{1, 2}, 2) }, "should not contain 2"},
	{"ElementsMatch", func(t testing.TB) bool { return expect.ElementsMatch(t, []int{1, 2, 2}, []int{2, 1, 2}) }, func(t testing.TB) bool { return expect.ElementsMatch(t, []int{1, 2}, []int{2, 2}) }, "missing: []interface {}{1}"},
	{"NoError", func(t testing.TB) bool { return expect.NoError(t, nil) }, func(t testing.TB) bool { return expect.NoError(t, errTarget) }, `"target" (*errors.errorString)`},
	{"Error", func(t testing.TB) bool { return expect.Error(t, errTarget) }, func(t testing.TB) bool { return expect.Error(t, nil) }, "want an error"},
	{"ErrorIs", func(t testing.TB) bool { return expect.ErrorIs(t, errWrapped, errTarget) }, func(t testing.TB) bool { return expect.ErrorIs(t, errTarget, errWrapped) }, "wrapped: target"},
	{"NotErrorIs", func(t testing.TB) bool { return expect.NotErrorIs(t, errTarget, errWrapped) }, func(t testing.TB) bool { return expect.NotErrorIs(t, errWrapped, errTarget) }, "should not be"},
	{"ErrorAs", func(t testing.TB) bool {
		var pe *fs.PathError
		return expect.ErrorAs(t, &fs.PathError{Err: errTarget}, &pe)
	}, func(t testing.TB) bool { var pe *fs.PathError; return expect.ErrorAs(t, errTarget, &pe) }, "**fs.PathError"},
	{"ErrorContains", func(t testing.TB) bool { return expect.ErrorContains(t, errWrapped, "wrap") }, func(t testing.TB) bool { return expect.ErrorContains(t, nil, "wrap") }, `containing "wrap"`},
	{"Less", func(t testing.TB) bool { return expect.Less(t, 1, 2) }, func(t testing.TB) bool { return expect.Less(t, "b", "a") }, `want "b" (string) < "a" (string)`},
	{"Less types", func(t testing.TB) bool { return expect.Less(t, []byte("a"), []byte("b")) }, func(t testing.TB) bool { return expect.Less(t, 1, int64(2)) }, "cannot order"},
	{"LessOrEqual", func(t testing.TB) bool { return expect.LessOrEqual(t, 2.0, 2.0) }, func(t testing.TB) bool { return expect.LessOrEqual(t, uint(3), uint(2)) }, "<="},
	{"Greater", func(t testing.TB) bool { return expect.Greater(t, time.Unix(2, 0), time.Unix(1, 0)) }, func(t testing.TB) bool { return expect.Greater(t, 1, 1) }, ">"},
	{"GreaterOrEqual", func(t testing.TB) bool { return expect.GreaterOrEqual(t, 1, 1) }, func(t testing.TB) bool { return expect.GreaterOrEqual(t, 0, 1) }, ">="},
	{"Positive", func(t testing.TB) bool { return expect.Positive(t, time.Nanosecond) }, func(t testing.TB) bool { return expect.Positive(t, 0.0) }, "> 0"},
	{"InDelta", func(t testing.TB) bool { return expect.InDelta(t, 10, 11, 1) }, func(t testing.TB) bool { return expect.InDelta(t, 10, 12.5, 1) }, "difference -2.5 exceeds 1"},
	{"InEpsilon", func(t testing.TB) bool { return expect.InEpsilon(t, 100, 101, 0.01) }, func(t testing.TB) bool { return expect.InEpsilon(t, 0, 0, 0.01) }, "undefined"},
	{"WithinDuration", func(t testing.TB) bool {
		return expect.WithinDuration(t, time.Unix(0, 0), time.Unix(1, 0), time.Second)
	}, func(t testing.TB) bool {
		return expect.WithinDuration(t, time.Unix(0, 0), time.Unix(2, 0), time.Second)
	}, "times -2s apart"},
	{"Panics", func(t testing.TB) bool { return expect.Panics(t, func() { panic(nil) }) }, func(t testing.TB) bool { return expect.Panics(t, func() {}) }, "want a panic"},
	{"PanicsWithValue", func(t testing.TB) bool { return expect.PanicsWithValue(t, "v", func() { panic("v") }) }, func(t testing.TB) bool { return expect.PanicsWithValue(t, "v", func() { panic("w") }) }, `"w"`},
	{"NotPanics", func(t testing.TB) bool { return expect.NotPanics(t, func() {}) }, func(t testing.TB) bool { return expect.NotPanics(t, func() { panic("boom") }) }, "unexpected panic: boom"},
	{"Eventually", func(t testing.TB) bool {
		n := 0
		return expect.Eventually(t, func() bool { n++; return n == 3 }, time.Minute, time.Microsecond)
	}, func(t testing.TB) bool {
		return expect.Eventually(t, func() bool { return false }, time.Millisecond, time.Microsecond)
	}, "not met within 1ms"},
	{"Regexp", func(t testing.TB) bool { return expect.Regexp(t, `^a+$`, "aaa") }, func(t testing.TB) bool { return expect.Regexp(t, regexp.MustCompile(`^b`), 42) }, `"42" does not match "^b"`},
	{"FileExists", func(t testing.TB) bool { return expect.FileExists(t, file) }, func(t testing.TB) bool { return expect.FileExists(t, filepath.Dir(file)) }, "is a directory"},
}

var file string

func TestChecks(t *testing.T) {
	file = filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			if !c.holds(r) || len(r.failures) != 0 {
				t.Fatalf("the check that holds failed: %q", r.failures)
			}
			if c.fails(r) || len(r.failures) != 1 {
				t.Fatalf("the check that fails: %d failures %q, want 1", len(r.failures), r.failures)
			}
			if !strings.Contains(r.failures[0], c.failureHas) {
				t.Errorf("failure %q does not say %q", r.failures[0], c.failureHas)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	for _, c := range []struct {
		msg  []any
		want string
	}{
		{nil, "want true, got false"},
		{[]any{"key %q step %d", "k", 2}, "want true, got false\n\tmessage: key \"k\" step 2"},
		{[]any{point{1, 2}}, "message: {X:1 Y:2}"},
		{[]any{1, 2}, "message: 1 2"},
	} {
		r := &recorder{TB: t}
		expect.True(r, false, c.msg...)
		if len(r.failures) != 1 || !strings.HasSuffix(r.failures[0], c.want) {
			t.Errorf("message %v: got %q, want it to end with %q", c.msg, r.failures, c.want)
		}
	}
}

func Example() {
	t := &testing.T{}
	fmt.Println(expect.Equal(t, 3, 1+2), expect.ErrorIs(t, errWrapped, errTarget))
	// Output: true true
}
