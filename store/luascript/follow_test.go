package luascript

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// The address is what instances agree on: another computation in another
// version would leave announcements unheard, so its figures are pinned.
func TestKeyAddress(t *testing.T) {
	expect.Equal(t, "f5c72404b9e2bbeb", announcement(keyAddress("", "k")))
	expect.Equal(t, keyAddress("login", "203.0.113.9"), keyAddress("login", "203.0.113.9"))
	expect.NotEqual(t, keyAddress("a", "bc"), keyAddress("ab", "c"), "the boundary counts")
	expect.NotEqual(t, keyAddress("", "12345678"), keyAddress("", "123456789"))
	expect.NotEqual(t, keyAddress("", "a"), keyAddress("", "a\x00"))
	expect.NotEqual(t, keyAddress("", "abcd"), keyAddress("", "abcdbcd"), "overlapping halves, other lengths")
	expect.NotEqual(t, keyAddress("", "123456789abcdefgh"), keyAddress("", "123456789abcdefgi"), "the last byte of a long key")
	long := strings.Repeat("k", 10<<10)
	expect.NotEqual(t, keyAddress("api", long), keyAddress("api", long+"k"))
}

func TestParseAnnouncement(t *testing.T) {
	for _, addr := range []uint64{0, 1, 0xdeadbeef, 1<<64 - 1, keyAddress("api", "{k}\n")} {
		got, ok := parseAnnouncement(announcement(addr))
		must.True(t, ok)
		expect.Equal(t, addr, got)
	}
	for _, bad := range []string{
		"", "0", "02c35f12e303c11", "02c35f12e303c1170", "02C35F12E303C117", "02c35f12e303c11g",
		"{api:k}\n12345678", " 02c35f12e303c11", "02c35f12e303c11\n", strings.Repeat("0", 10<<10),
		"\xff\xfe02c35f12e303c1",
	} {
		_, ok := parseAnnouncement(bad)
		expect.False(t, ok, "%q", bad)
	}
}

// A denial whose call was sent before a drop (a reset or a refund, here or
// announced) is never served, even when its reply comes after the drop.
func TestDropVoidsCallsInFlight(t *testing.T) {
	c := newDenyCache(64)
	req := core.TakeRequest{Namespace: "login", Key: "203.0.113.9", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(5)}, Cost: 1, Now: t0}
	encs := checked(t, req)
	denied := core.Decision{Limit: req.Limits[0], RetryAfter: time.Minute, ResetAfter: time.Minute}
	addr := keyAddress(req.Namespace, req.Key)

	p := c.probe(req, encs) // the call goes out
	c.drop(addr)            // a reset runs, and its drop comes first
	c.put(p, req, t0, denied, 0)
	_, ok := c.get(c.probe(req, encs), req, t0)
	expect.False(t, ok, "a reply that comes after the drop is not cached")

	p = c.probe(req, encs)
	c.dropAll() // a lost subscription
	c.put(p, req, t0, denied, 0)
	_, ok = c.get(c.probe(req, encs), req, t0)
	expect.False(t, ok, "nor after dropping everything")

	// The check in put and the store are two steps: a drop between them
	// leaves an entry of an old generation, which get refuses.
	p = c.probe(req, encs)
	p.slot.entry.Store(&denial{id: p.id, gen: p.gen, cost: 1, at: t0, until: t0.Add(time.Minute), d: denied})
	c.slotOf(addr).gen.Add(1)
	_, ok = c.get(c.probe(req, encs), req, t0)
	expect.False(t, ok)

	c.put(c.probe(req, encs), req, t0, denied, 0)
	_, ok = c.get(c.probe(req, encs), req, t0)
	expect.True(t, ok, "a denial after the drop is cached")
}

// A key is dropped whatever algorithm, limits and cost its denial was cached
// for, and only that key.
func TestDropKeyWhatever(t *testing.T) {
	for _, req := range []core.TakeRequest{
		{Namespace: "api", Key: "k", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerMinute(5), core.PerHour(50)}, Cost: 3, Now: t0},
		{Namespace: "api", Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerSecond(2)}, Cost: 1, Now: t0},
	} {
		c := newDenyCache(1 << 10)
		other := req
		other.Key = "k2"
		for _, r := range []core.TakeRequest{req, other} {
			c.put(c.probe(r, checked(t, r)), r, t0, core.Decision{Limit: r.Limits[0], RetryAfter: time.Second}, 0)
		}
		c.drop(keyAddress("api", "k"))
		_, ok := c.get(c.probe(req, checked(t, req)), req, t0)
		expect.False(t, ok, req.Algorithm)
		_, ok = c.get(c.probe(other, checked(t, other)), other, t0)
		expect.True(t, ok, "another key stays")
	}
}

// subscriber is a Backend whose subscriptions deliver what a test sends, in
// process, to check FollowResets' loop; the stores' tests over a real Redis
// check it end to end.
type subscriber struct {
	replyBackend
	mu       sync.Mutex
	channels []string
	deliver  chan func(subscribed func(), message func(string)) error
}

func (s *subscriber) Subscribe(ctx context.Context, channel string, subscribed func(), message func(string)) error {
	s.mu.Lock()
	s.channels = append(s.channels, channel)
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case f := <-s.deliver:
			if err := f(subscribed, message); err != nil {
				return err
			}
		}
	}
}

func TestFollowResets(t *testing.T) {
	sub := &subscriber{deliver: make(chan func(func(), func(string)) error)}
	s, err := New(sub, WithPrefix("app:"), WithCallerClock())
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.FollowResets(ctx) }()
	run := func(f func(subscribed func(), message func(string)) error) {
		ran := make(chan struct{})
		sub.deliver <- func(subscribed func(), message func(string)) error {
			defer close(ran)
			return f(subscribed, message)
		}
		<-ran
	}

	req := core.TakeRequest{Namespace: "api", Key: "{k}\n", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: t0}
	encs := checked(t, req)
	cached := func() bool {
		_, ok := s.cache.get(s.cache.probe(req, encs), req, t0)
		return ok
	}
	deny := func() {
		s.cache.put(s.cache.probe(req, encs), req, t0, core.Decision{Limit: req.Limits[0], RetryAfter: time.Second}, 0)
	}

	deny()
	run(func(subscribed func(), _ func(string)) error { subscribed(); return nil })
	expect.False(t, cached(), "a confirmed subscription drops the whole cache")
	deny()

	flood(t, s, run)
	expect.True(t, cached(), "a flood of garbage and of other keys' announcements leaves the key's denial")

	run(func(_ func(), message func(string)) error {
		message(announcement(keyAddress("api", "{k}\n")))
		return nil
	})
	expect.False(t, cached(), "the key's announcement drops it")

	deny()
	run(func(func(), func(string)) error { return errors.New("connection reset") })
	must.Eventually(t, func() bool { return s.FollowStats().Lost == 1 }, 10*time.Second, time.Millisecond)
	expect.False(t, cached(), "a lost subscription drops the whole cache")
	deny()
	run(func(subscribed func(), _ func(string)) error { subscribed(); return nil }) // renewed
	expect.False(t, cached(), "and so does its renewal")
	expect.Equal(t, uint64(2), s.FollowStats().Subscriptions)

	cancel()
	expect.ErrorIs(t, <-done, context.Canceled)
	sub.mu.Lock()
	expect.Equal(t, []string{"app:{resets}:announce", "app:{resets}:announce"}, sub.channels)
	sub.mu.Unlock()
}

// flood sends 100,000 messages through run: garbage (empty, 10 KiB, braces
// and a newline, upper case) and announcements of another key. Each is
// counted, none is kept.
func flood(t *testing.T, s *Store, run func(func(subscribed func(), message func(string)) error)) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run(func(_ func(), message func(string)) error {
		for i := range 100_000 {
			message([]string{"", strings.Repeat("x", 10<<10), "{api:k}\n", "FFFFFFFFFFFFFFFF", announcement(keyAddress("api", "other"))}[i%5])
		}
		return nil
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	expect.Equal(t, FollowStats{Subscriptions: 1, Announcements: 20_000, Ignored: 80_000}, s.FollowStats())
	expect.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(1<<20), "nothing kept per message")
}

func TestFollowResetsRefused(t *testing.T) {
	s, err := New(replyBackend{})
	must.NoError(t, err)
	expect.ErrorIs(t, s.FollowResets(context.Background()), ErrCannotFollow)

	sub := &subscriber{deliver: make(chan func(func(), func(string)) error)}
	s, err = New(sub, WithLocalCache(0))
	must.NoError(t, err)
	expect.NoError(t, s.FollowResets(context.Background()), "no cache, nothing to follow")
}
