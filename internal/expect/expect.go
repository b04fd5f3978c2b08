// Package expect holds the assertions the root module's tests and test
// kits use, built on testing.TB alone so that the module requires nothing
// for its tests.
//
// Every function reports a failure with t.Errorf and returns whether the
// check held, so the test goes on; package must stops the test instead.
// Values are printed with %#v, errors with their text and type, and the
// optional message arguments (the key, the step) follow on their own line:
// a string with arguments is a format, anything else is printed with %+v.
package expect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// report fails t with failure and the caller's message, and returns false.
func report(t testing.TB, failure string, msg []any) bool {
	t.Helper()
	if m := message(msg); m != "" {
		failure += "\n\tmessage: " + strings.ReplaceAll(m, "\n", "\n\t         ")
	}
	t.Errorf("%s", failure)
	return false
}

// message formats the optional message arguments of a check.
func message(msg []any) string {
	switch len(msg) {
	case 0:
		return ""
	case 1:
		if s, ok := msg[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msg[0])
	}
	if format, ok := msg[0].(string); ok {
		return fmt.Sprintf(format, msg[1:]...)
	}
	return fmt.Sprint(msg...)
}

// show prints a value with its type where %#v does not carry it.
func show(v any) string {
	if v == nil {
		return "nil"
	}
	s := fmt.Sprintf("%#v", v)
	if t := reflect.TypeOf(v).String(); !strings.HasPrefix(s, t) && !strings.HasPrefix(s, "&"+strings.TrimPrefix(t, "*")) {
		s += " (" + t + ")"
	}
	return s
}

// wantGot is the body of a failure that compares two values.
func wantGot(what string, want, got any) string {
	return what + "\n\twant: " + show(want) + "\n\tgot:  " + show(got)
}

// True checks that value is true.
func True(t testing.TB, value bool, msg ...any) bool {
	t.Helper()
	if value {
		return true
	}
	return report(t, "want true, got false", msg)
}

// False checks that value is false.
func False(t testing.TB, value bool, msg ...any) bool {
	t.Helper()
	if !value {
		return true
	}
	return report(t, "want false, got true", msg)
}
