package core

import "context"

// WaitTokenLeases waits for l's background lease calls (refreshes and
// give-backs), for tests that check what they left.
func WaitTokenLeases(l *Limiter) {
	if l.lease != nil {
		l.lease.bg.Wait()
	}
}

// LeaseLanded returns the channel closed when the lease call of key's that
// l's requests wait for lands, or nil when none is on its way.
func LeaseLanded(l *Limiter, key string) <-chan struct{} {
	set := l.lease.table.set(key)
	set.mu.Lock()
	defer set.mu.Unlock()
	if e := set.find(key); e != nil && e.refreshing {
		return e.landed
	}
	return nil
}

// AwaitLeaseCall waits as a request of l's does for a lease call on its
// way whose landing closes landed.
func AwaitLeaseCall(ctx context.Context, l *Limiter, landed <-chan struct{}) bool {
	return l.lease.await(ctx, landed)
}
