package expect

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// equal reports whether want and got are equal: byte slices by content,
// everything else with reflect.DeepEqual (so the types must match).
func equal(want, got any) bool {
	if want == nil || got == nil {
		return want == got
	}
	w, ok := want.([]byte)
	if !ok {
		return reflect.DeepEqual(want, got)
	}
	g, ok := got.([]byte)
	if !ok {
		return false
	}
	if w == nil || g == nil {
		return w == nil && g == nil
	}
	return bytes.Equal(w, g)
}

// Equal checks that got equals want (reflect.DeepEqual; byte slices by
// content).
func Equal(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if equal(want, got) {
		return true
	}
	return report(t, wantGot("not equal", want, got), msg)
}

// NotEqual checks that got differs from unwanted.
func NotEqual(t testing.TB, unwanted, got any, msg ...any) bool {
	t.Helper()
	if !equal(unwanted, got) {
		return true
	}
	return report(t, "want a value other than "+show(unwanted)+", got it", msg)
}

// isNil reports whether v is nil or a nil chan, func, interface, map,
// pointer or slice.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map,
		reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// Nil checks that v is nil (a nil pointer, map, slice... counts).
func Nil(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if isNil(v) {
		return true
	}
	return report(t, "want nil, got "+show(v), msg)
}

// NotNil checks that v is not nil.
func NotNil(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if !isNil(v) {
		return true
	}
	return report(t, "want a value, got nil ("+show(v)+")", msg)
}

// Zero checks that v is nil or the zero value of its type.
func Zero(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if v == nil || reflect.DeepEqual(v, reflect.Zero(reflect.TypeOf(v)).Interface()) {
		return true
	}
	return report(t, "want the zero value, got "+show(v), msg)
}

// isEmpty reports whether v is a zero value, an empty chan, map or
// slice, or a pointer to an empty value.
func isEmpty(v any) bool {
	return v == nil || isEmptyValue(reflect.ValueOf(v))
}

func isEmptyValue(v reflect.Value) bool {
	if v.IsZero() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return isEmptyValue(v.Elem())
	}
	return false
}

// Empty checks that v is empty: a zero value, an empty chan, map or
// slice, or a pointer to an empty value.
func Empty(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if isEmpty(v) {
		return true
	}
	return report(t, "want empty, got "+show(v), msg)
}

// NotEmpty checks that v is not empty (see Empty).
func NotEmpty(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if !isEmpty(v) {
		return true
	}
	return report(t, "want a non-empty value, got "+show(v), msg)
}

// Same checks that got and want are pointers of one type to one
// variable.
func Same(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	wt, gt := reflect.TypeOf(want), reflect.TypeOf(got)
	if wt != nil && wt.Kind() == reflect.Pointer && wt == gt && want == got {
		return true
	}
	return report(t, wantGot("not the same pointer", want, got)+
		"\n\t(want "+pointer(want)+", got "+pointer(got)+")", msg)
}

// pointer prints the address of a pointer, or says that v is none.
func pointer(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		return show(rv.Pointer())
	}
	return "no pointer"
}

// JSONEq checks that two JSON documents hold equal values.
func JSONEq(t testing.TB, want, got string, msg ...any) bool {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return report(t, "want is not valid JSON: "+err.Error()+"\n\twant: "+want, msg)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return report(t, "got is not valid JSON: "+err.Error()+"\n\tgot:  "+got, msg)
	}
	if equal(w, g) {
		return true
	}
	return report(t, "JSON not equal\n\twant: "+want+"\n\tgot:  "+got, msg)
}
