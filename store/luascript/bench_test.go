package luascript

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// replyBackend replies with a fixed reply and allocates nothing, so a
// benchmark measures the store's own cost.
type replyBackend struct{ reply []int64 }

func (f replyBackend) Eval(_ context.Context, _ *Script, _, _ []string, dst []int64) ([]int64, error) {
	return append(dst, f.reply...), nil
}

// BenchmarkTakeCachedDenial is a denial answered from the local cache: the
// path a flooded key takes, with no call to Redis.
func BenchmarkTakeCachedDenial(b *testing.B) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := at.UnixMicro()
	s, err := New(replyBackend{[]int64{0, now, now + 2_000_000}}, WithCallerClock())
	if err != nil {
		b.Fatal(err)
	}
	req := core.TakeRequest{Namespace: "api", Key: "203.0.113.9", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: at}
	if d, err := s.Take(context.Background(), req); err != nil || d.Allowed {
		b.Fatal(d, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if d, _ := s.Take(context.Background(), req); d.Allowed {
			b.Fatal("admitted")
		}
	}
}

// BenchmarkTake is an admitted request with the cache on: the lookup that
// misses, the call (to a backend that costs nothing) and the decoding.
func BenchmarkTake(b *testing.B) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := at.UnixMicro()
	s, err := New(replyBackend{[]int64{1, now, 0}})
	if err != nil {
		b.Fatal(err)
	}
	req := core.TakeRequest{Namespace: "api", Key: "203.0.113.9", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1000)}, Cost: 1, Now: at}
	b.ReportAllocs()
	for b.Loop() {
		if d, _ := s.Take(context.Background(), req); !d.Allowed {
			b.Fatal("denied")
		}
	}
}

// BenchmarkKeyAddress is what the cache's slot costs a request beyond the
// seeded identity: the address of its key.
func BenchmarkKeyAddress(b *testing.B) {
	var sink uint64
	for b.Loop() {
		sink += keyAddress("api", "203.0.113.9")
	}
	if sink == 1 {
		b.Log(sink)
	}
}
