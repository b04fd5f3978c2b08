package rules

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// minRetry is the first wait before subscribing again after a subscription
// failed or broke; the wait doubles up to the poll interval.
const minRetry = 100 * time.Millisecond

// start loads the rules from Redis, or, when that fails, the fallback file.
func (w *RedisWatcher) start() {
	w.fetch()
	if w.lastErr == nil {
		return
	}
	log := w.set.Logger()
	if w.cfg.fallback == "" {
		log.Warn("ratewarden: rules in redis not loaded at start; the rules the set was built with stay until they are",
			"key", w.cfg.docKey(), "version_in_force", w.set.Version(), "err", w.lastErr)
		return
	}
	log.Warn("ratewarden: rules in redis not loaded at start; loading the fallback file until they are",
		"key", w.cfg.docKey(), "file", w.cfg.fallback, "err", w.lastErr)
	raw, err := readDocumentFile(w.cfg.fallback)
	if err != nil {
		log.Error("ratewarden: fallback rules file unreadable; the rules in force stay",
			"file", w.cfg.fallback, "version_in_force", w.set.Version(), "err", err)
		w.set.TellReloadHook(w.cfg.fallback, err)
		return
	}
	_ = w.set.Load(raw, w.cfg.fallback, initial()) // the Set reports it, refused or not
}

// subscribeLoop keeps the watcher subscribed to the announcements: it
// subscribes again whenever the subscription ends, at once when the watcher
// ended it (restartSubscription), and otherwise after a wait that doubles, up
// to the poll interval, while subscribing fails.
func (w *RedisWatcher) subscribeLoop() {
	defer w.wg.Done()
	log := w.set.Logger()
	backoff, failures := min(minRetry, w.cfg.poll), 0
	for {
		ctx, cancel := context.WithCancel(w.ctx)
		w.subMu.Lock()
		w.subCancel = cancel
		w.subMu.Unlock()
		var confirmed atomic.Bool
		err := w.b.Subscribe(ctx, w.cfg.channel(), func() {
			confirmed.Store(true)
			w.stats.subscriptions.Add(1)
			notify(w.subscribed)
		}, w.onMessage)
		restarted := ctx.Err() != nil
		cancel()
		switch {
		case w.ctx.Err() != nil:
			return
		case restarted:
			continue
		case confirmed.Load():
			backoff, failures = min(minRetry, w.cfg.poll), 0
		}
		failures++
		wait := backoff/2 + rand.N(backoff/2+1)
		args := []any{"channel", w.cfg.channel(), "retry_in", wait, "err", err}
		if failures == 1 {
			log.Warn("ratewarden: rules announcements not received; subscribing again (polls go on meanwhile)", args...)
		} else {
			log.Debug("ratewarden: subscribing to rules announcements failed again", args...)
		}
		if !sleepCtx(w.ctx, wait) {
			return
		}
		backoff = min(backoff*2, w.cfg.poll)
	}
}

// onMessage notes an announcement for the loop.
func (w *RedisWatcher) onMessage(payload string) {
	w.stats.announcements.Add(1)
	w.lastNews.Store(&payload)
	notify(w.announced)
}

// restartSubscription ends the current subscription, which subscribeLoop
// renews at once: a poll found a version no announcement brought, so the
// subscription may be dead without its client knowing (a half-open
// connection).
func (w *RedisWatcher) restartSubscription() {
	w.subMu.Lock()
	defer w.subMu.Unlock()
	if w.subCancel != nil {
		w.subCancel()
	}
}

// notify signals c without blocking; a signal already pending stands for both.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// sleepCtx waits d, or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
