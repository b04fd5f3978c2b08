package expect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// length returns len(v), or false where len does not apply.
func length(v any) (n int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return reflect.ValueOf(v).Len(), true
}

// Len checks that len(v) is n.
func Len(t testing.TB, v any, n int, msg ...any) bool {
	t.Helper()
	got, ok := length(v)
	if !ok {
		return report(t, "len does not apply to "+show(v), msg)
	}
	if got == n {
		return true
	}
	return report(t, fmt.Sprintf("want length %d, got %d: %s", n, got, show(v)), msg)
}

// contains reports whether s (a string, map, slice or array) holds
// element: a substring, a key or an element equal to it.
func contains(s, element any) (found, ok bool) {
	sv := reflect.ValueOf(s)
	switch sv.Kind() {
	case reflect.String:
		ev := reflect.ValueOf(element)
		return ev.Kind() == reflect.String && strings.Contains(sv.String(), ev.String()), true
	case reflect.Map:
		for _, k := range sv.MapKeys() {
			if equal(k.Interface(), element) {
				return true, true
			}
		}
		return false, true
	case reflect.Slice, reflect.Array:
		for i := range sv.Len() {
			if equal(sv.Index(i).Interface(), element) {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

// Contains checks that s (a string, map, slice or array) holds element:
// a substring, a key or an equal element.
func Contains(t testing.TB, s, element any, msg ...any) bool {
	t.Helper()
	found, ok := contains(s, element)
	if !ok {
		return report(t, show(s)+" cannot hold elements", msg)
	}
	if found {
		return true
	}
	return report(t, show(s)+"\n\tdoes not contain "+show(element), msg)
}

// NotContains checks that s (a string, map, slice or array) does not hold
// element.
func NotContains(t testing.TB, s, element any, msg ...any) bool {
	t.Helper()
	found, ok := contains(s, element)
	if !ok {
		return report(t, show(s)+" cannot hold elements", msg)
	}
	if !found {
		return true
	}
	return report(t, show(s)+"\n\tshould not contain "+show(element), msg)
}

// ElementsMatch checks that two lists hold equal elements, each as many
// times, in any order.
func ElementsMatch(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if isEmpty(want) && isEmpty(got) {
		return true
	}
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	if !isList(wv) || !isList(gv) {
		return report(t, wantGot("ElementsMatch takes two slices or arrays", want, got), msg)
	}
	used := make([]bool, gv.Len())
	var missing []any
	for i := range wv.Len() {
		w := wv.Index(i).Interface()
		j := unusedEqual(gv, used, w)
		if j < 0 {
			missing = append(missing, w)
			continue
		}
		used[j] = true
	}
	var extra []any
	for j, u := range used {
		if !u {
			extra = append(extra, gv.Index(j).Interface())
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return true
	}
	return report(t, wantGot("elements differ", want, got)+
		"\n\tmissing: "+show(missing)+"\n\textra:   "+show(extra), msg)
}

func isList(v reflect.Value) bool {
	return v.Kind() == reflect.Slice || v.Kind() == reflect.Array
}

// unusedEqual returns the index of the first element of list not yet
// used that equals v, or -1.
func unusedEqual(list reflect.Value, used []bool, v any) int {
	for j := range list.Len() {
		if !used[j] && equal(list.Index(j).Interface(), v) {
			return j
		}
	}
	return -1
}
