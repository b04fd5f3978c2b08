package httplimit

import (
	"strconv"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
)

// appendDecimal writes what strconv.AppendInt writes, in place when there is
// room and through strconv when there is not, at every length and edge.
func TestAppendDecimal(t *testing.T) {
	values := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 3600, 9999, 10000, 86400, 99999,
		123456789, 999999999999999999, 1e18 - 1, 1e18, 1<<63 - 1, -1, -3600, -1 << 63}
	for p := int64(1); p > 0 && p <= 1e18; p *= 10 {
		values = append(values, p-1, p, p+1)
	}
	for _, v := range values {
		want := strconv.AppendInt([]byte("x="), v, 10)
		var buf [48]byte
		got := appendDecimal(append(buf[:0], "x="...), v)
		expect.Equal(t, string(want), string(got), "value %d", v)
		if len(want) <= len(buf) {
			expect.True(t, &got[0] == &buf[0], "value %d: written in place", v)
		}
		tight := appendDecimal(make([]byte, 2, 3), v) // no room: strconv's path
		expect.Equal(t, "\x00\x00"+strconv.FormatInt(v, 10), string(tight), "value %d without room", v)
	}
}

// Every value from 0 to 1,000,000 (the Retry-After and remaining figures of
// real limits) is written as strconv writes it.
func TestAppendDecimalEveryShortValue(t *testing.T) {
	var buf [24]byte
	for v := int64(0); v <= 1_000_000; v++ {
		if got := appendDecimal(buf[:0], v); string(got) != strconv.FormatInt(v, 10) {
			t.Fatalf("appendDecimal(%d) = %q", v, got)
		}
	}
}
