package core

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// nowMicros reads the system clock as AllowNAt's general path does, in µs:
// Micros(systemAt(arrival)) for every arrival it accepts, and it refuses
// exactly the readings before the epoch or past the int64 nanoseconds.
func TestNowMicrosIsTheSystemClockInMicros(t *testing.T) {
	l := &Limiter{clock: SystemClock{}, sys: true}
	rng := rand.New(rand.NewPCG(1, 2))
	arrivals := []time.Time{
		time.Now(), startWall, time.Unix(0, 0), time.Unix(0, 999), time.Unix(-1, 0),
		time.Unix(0, math.MaxInt64), time.Unix(0, math.MaxInt64).Add(time.Hour), time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	}
	for range 10_000 {
		arrivals = append(arrivals, time.Now().Add(time.Duration(rng.Int64N(2*int64(100*365*24*time.Hour))-int64(100*365*24*time.Hour))))
	}
	for _, a := range arrivals {
		us, ok := l.nowMicros(a)
		want := Micros(systemAt(a))
		switch {
		case !ok && want >= 0 && systemAt(a).UnixNano() != math.MaxInt64:
			t.Errorf("arrival %v: refused, want %d", a, want)
		case ok && us != want:
			t.Errorf("arrival %v: %d µs, want %d", a, us, want)
		}
	}
	us, ok := l.nowMicros(time.Time{})
	if d := Micros(SystemClock{}.Now()) - us; !ok || d < 0 || d > int64(time.Second/time.Microsecond) {
		t.Errorf("a zero arrival reads the clock: %d µs (ok %v), %d µs before SystemClock", us, ok, d)
	}
}
