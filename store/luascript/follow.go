package luascript

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// Subscriber is what a Backend implements, beside Eval, when its client can
// subscribe to a channel: Store.FollowResets needs it. The bindings of
// go-redis and rueidis implement it; a Backend that does not is still a
// whole Backend, whose store cannot follow resets.
type Subscriber interface {
	// Subscribe subscribes to channel and blocks while the subscription
	// lasts. It calls subscribed each time the server confirms the
	// subscription (again after a reconnection, for a client that
	// resubscribes on its own) and message with each message's payload, in
	// order; neither callback blocks. It returns ctx.Err() once ctx ends,
	// and otherwise when the subscription is lost and not renewed, with an
	// error saying why (nil when the server ended it). It is the method
	// rules.RedisBackend has.
	Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error
}

// ErrCannotFollow reports a FollowResets on a store whose Backend does not
// implement Subscriber.
var ErrCannotFollow = errors.New("ratewarden: the store's backend cannot subscribe")

// FollowStats counts what a store's FollowResets did, for an operator's
// metrics or a test that waits for an announcement.
type FollowStats struct {
	// Subscriptions counts the subscriptions Redis confirmed (the first and
	// every renewal); each dropped the whole cache of denials, since
	// announcements may have been missed before it.
	Subscriptions uint64
	// Lost counts the subscriptions that ended other than by FollowResets'
	// context; each dropped the whole cache.
	Lost uint64
	// Announcements counts the announcements of a reset or a refund heard,
	// each of which dropped the cached denials of one key.
	Announcements uint64
	// Ignored counts the messages on the channel that were no announcement.
	Ignored uint64
}

// followStats is FollowStats as the store updates it.
type followStats struct {
	subscriptions, lost, announcements, ignored atomic.Uint64
}

// Following retry waits: the first after a subscription fails or breaks,
// doubling up to the last.
const (
	minFollowRetry = 100 * time.Millisecond
	maxFollowRetry = 5 * time.Second
)

// FollowResets keeps this store's cache of denials in step with every other
// instance's resets and refunds: it subscribes, through the Backend, to the
// channel every reset and refund of the store's prefix is announced on (by
// the script that does it, on any instance, from any Store: Limiter.Reset,
// httplimit.Policy.Reset, rules.Set.Reset, `ratewarden key reset`, a
// refund) and drops this store's cached denials of each announced key, at
// once, whatever algorithm, limits and cost they were cached for. Run it on
// a goroutine of its own for as long as the store serves: it blocks until
// ctx ends and then returns ctx.Err().
//
// A subscription that breaks is renewed (after a wait that doubles from
// 100 ms up to 5 s while subscribing fails); announcements sent meanwhile
// are lost, so the whole cache is dropped when a subscription ends and each
// time one is confirmed. A message that is not an announcement is counted
// (FollowStats.Ignored) and changes nothing.
//
// It returns ErrCannotFollow at once for a Backend that does not implement
// Subscriber, and nil at once for a store without a local cache (nothing to
// drop).
func (s *Store) FollowResets(ctx context.Context) error {
	sub, ok := s.backend.(Subscriber)
	if !ok {
		return fmt.Errorf("%w: %T does not implement luascript.Subscriber", ErrCannotFollow, s.backend)
	}
	if s.cache == nil {
		return nil
	}
	wait := minFollowRetry
	for {
		var confirmed atomic.Bool // the callback may run on the client's goroutine
		// Why a subscription ended changes nothing: it is counted, and renewed.
		_ = sub.Subscribe(ctx, s.cfg.channel, func() {
			confirmed.Store(true)
			s.cache.dropAll()
			s.follow.subscriptions.Add(1)
		}, s.onAnnouncement)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.cache.dropAll()
		s.follow.lost.Add(1)
		if confirmed.Load() {
			wait = minFollowRetry
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxFollowRetry)
	}
}

// onAnnouncement drops the cached denials of the key payload names, or
// counts a message that names none.
func (s *Store) onAnnouncement(payload string) {
	addr, ok := parseAnnouncement(payload)
	if !ok {
		s.follow.ignored.Add(1)
		return
	}
	s.cache.drop(addr)
	s.follow.announcements.Add(1) // after the drop: a test that saw it may count on it
}

// FollowStats returns what FollowResets did so far (all zero when it never
// ran).
func (s *Store) FollowStats() FollowStats {
	return FollowStats{
		Subscriptions: s.follow.subscriptions.Load(),
		Lost:          s.follow.lost.Load(),
		Announcements: s.follow.announcements.Load(),
		Ignored:       s.follow.ignored.Load(),
	}
}

// dropKey forgets this store's cached denials of req's key, whatever their
// algorithm, limits and cost, and voids those of calls in flight.
func (s *Store) dropKey(req core.TakeRequest) {
	if s.cache != nil {
		s.cache.drop(keyAddress(req.Namespace, req.Key))
	}
}
