package expect

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
)

// compare orders two values of one type: integers, floats, strings,
// byte slices and times. ok is false for other types or two types.
func compare(a, b any) (order int, ok bool) {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return 0, false
	}
	switch x := a.(type) {
	case time.Time:
		return x.Compare(b.(time.Time)), true
	case []byte:
		return bytes.Compare(x, b.([]byte)), true
	}
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	switch av.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(av.Int(), bv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp.Compare(av.Uint(), bv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(av.Float(), bv.Float()), true
	case reflect.String:
		return cmp.Compare(av.String(), bv.String()), true
	}
	return 0, false
}

// ordered checks that compare(a, b) is one of the allowed orders.
func ordered(t testing.TB, a, b any, relation string, allowed func(int) bool, msg []any) bool {
	t.Helper()
	order, ok := compare(a, b)
	if !ok {
		return report(t, fmt.Sprintf("cannot order %s and %s", show(a), show(b)), msg)
	}
	if allowed(order) {
		return true
	}
	return report(t, fmt.Sprintf("want %s %s %s", show(a), relation, show(b)), msg)
}

// Less checks that a < b (two values of one ordered type).
func Less(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return ordered(t, a, b, "<", func(o int) bool { return o < 0 }, msg)
}

// LessOrEqual checks that a <= b (two values of one ordered type).
func LessOrEqual(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return ordered(t, a, b, "<=", func(o int) bool { return o <= 0 }, msg)
}

// Greater checks that a > b (two values of one ordered type).
func Greater(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return ordered(t, a, b, ">", func(o int) bool { return o > 0 }, msg)
}

// GreaterOrEqual checks that a >= b (two values of one ordered type).
func GreaterOrEqual(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return ordered(t, a, b, ">=", func(o int) bool { return o >= 0 }, msg)
}

// Positive checks that v is greater than the zero value of its type.
func Positive(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if v == nil {
		return report(t, "want a positive value, got nil", msg)
	}
	return ordered(t, v, reflect.Zero(reflect.TypeOf(v)).Interface(), ">", func(o int) bool { return o > 0 }, msg)
}

// float converts a number (any integer or float kind) to float64.
func float(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// InDelta checks that two numbers differ by at most delta.
func InDelta(t testing.TB, want, got any, delta float64, msg ...any) bool {
	t.Helper()
	w, wok := float(want)
	g, gok := float(got)
	if !wok || !gok {
		return report(t, wantGot("InDelta takes two numbers", want, got), msg)
	}
	if math.IsNaN(w) && math.IsNaN(g) {
		return true
	}
	if d := w - g; math.IsNaN(d) || d < -delta || d > delta {
		return report(t, wantGot(fmt.Sprintf("difference %v exceeds %v", d, delta), want, got), msg)
	}
	return true
}

// InEpsilon checks that got differs from want by at most epsilon times
// |want| (want must not be zero).
func InEpsilon(t testing.TB, want, got any, epsilon float64, msg ...any) bool {
	t.Helper()
	w, wok := float(want)
	g, gok := float(got)
	switch {
	case !wok || !gok:
		return report(t, wantGot("InEpsilon takes two numbers", want, got), msg)
	case math.IsNaN(w) && math.IsNaN(g):
		return true
	case w == 0 || math.IsNaN(w) || math.IsNaN(g):
		return report(t, wantGot("relative error undefined", want, got), msg)
	}
	if rel := math.Abs(w-g) / math.Abs(w); rel > epsilon {
		return report(t, wantGot(fmt.Sprintf("relative error %v exceeds %v", rel, epsilon), want, got), msg)
	}
	return true
}

// WithinDuration checks that two times are at most delta apart.
func WithinDuration(t testing.TB, want, got time.Time, delta time.Duration, msg ...any) bool {
	t.Helper()
	if d := want.Sub(got); d < -delta || d > delta {
		return report(t, wantGot(fmt.Sprintf("times %v apart, more than %v", d, delta), want, got), msg)
	}
	return true
}
