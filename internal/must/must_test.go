package must_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/internal/must"
)

// stopper is a testing.TB that records failures and stops.
type stopper struct {
	testing.TB
	failures []string
	stopped  bool
}

func (s *stopper) Helper() {}

func (s *stopper) Errorf(format string, args ...any) {
	s.failures = append(s.failures, fmt.Sprintf(format, args...))
}

func (s *stopper) FailNow() { s.stopped = true }

func TestStopsOnlyOnFailure(t *testing.T) {
	s := &stopper{TB: t}
	must.Equal(s, 3, 1+2, "key k")
	must.NoError(s, nil)
	if s.stopped || len(s.failures) != 0 {
		t.Fatalf("checks that hold: stopped %v, failures %q", s.stopped, s.failures)
	}
	must.Equal(s, 3, 4, "key %s", "k")
	if !s.stopped || len(s.failures) != 1 || !strings.Contains(s.failures[0], "want: 3 (int)\n\tgot:  4 (int)\n\tmessage: key k") {
		t.Fatalf("a check that fails: stopped %v, failures %q", s.stopped, s.failures)
	}
}

func TestEveryCheckStops(t *testing.T) {
	for name, fail := range map[string]func(testing.TB){
		"True":  func(t testing.TB) { must.True(t, false) },
		"Len":   func(t testing.TB) { must.Len(t, "ab", 1) },
		"Error": func(t testing.TB) { must.Error(t, nil) },
		"Zero":  func(t testing.TB) { must.Zero(t, 1) },
	} {
		s := &stopper{TB: t}
		fail(s)
		if !s.stopped || len(s.failures) != 1 {
			t.Errorf("%s: stopped %v, failures %q", name, s.stopped, s.failures)
		}
	}
}

func Example() {
	t := &testing.T{}
	must.NoError(t, nil)
	must.Equal(t, "a", "a")
	fmt.Println(t.Failed())
	// Output: false
}
