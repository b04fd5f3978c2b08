package core

// WaitTokenLeases waits for l's background lease calls (refreshes and
// give-backs), for tests that check what they left.
func WaitTokenLeases(l *Limiter) {
	if l.lease != nil {
		l.lease.bg.Wait()
	}
}
