package flags

import (
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Policy returns what the policy of lim takes besides its key: the limiter
// to run, lim or under -tier its first tier (lim.Tier), and the options of
// the other flags: /healthz (and /metrics) never limited, -fail closed,
// -dry-run, -count-only-failures, the error log, the tiers
// (httplimit.WithTiers) and the metrics observer. lim is the limiter of
// -algorithm and -limit on Store. The Setup keeps that policy, for the
// in-flight and token-lease metrics and to give its leased tokens back on
// Close.
func (s *Setup) Policy(lim *core.Limiter) (*core.Limiter, []httplimit.Option, error) {
	c := s.Config
	opts := []httplimit.Option{httplimit.WithSkip(func(r keyfuncs.Request) bool { return c.skipped(r.Path()) })}
	opts = append(opts, c.behaviourOptions()...)
	opts = append(opts, httplimit.WithObserver(s.errLog))
	if len(c.Tiers) > 0 {
		first, others, err := c.tiers(lim)
		if err != nil {
			return nil, nil, err
		}
		pick, err := c.TierPick()
		if err != nil {
			return nil, nil, err
		}
		lim = first
		opts = append(opts, httplimit.WithTiers(pick, others...))
	}
	if s.observer != nil {
		opts = append(opts, httplimit.WithObserver(s.observer))
	}
	if err := s.track(lim, opts); err != nil {
		return nil, nil, err
	}
	return lim, opts, nil
}

// behaviourOptions are the options of -fail closed, -dry-run,
// -count-only-failures and -settle-header, which every policy takes, with or
// without -rules.
func (c *Config) behaviourOptions() []httplimit.Option {
	var opts []httplimit.Option
	if c.FailClosed {
		opts = append(opts, httplimit.WithFailClosed())
	}
	if c.DryRun {
		opts = append(opts, httplimit.WithDryRun())
	}
	if c.CountOnlyFailures {
		opts = append(opts, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	}
	return append(opts, c.settleOptions()...)
}

// LimiterOptions are the limiter options of the flags, for the
// core.NewLimiter of -algorithm and -limit: -concurrency's in-flight limit
// (core.WithInFlight), -block-for's penalty box (core.WithBlockFor), and the
// Config's Clock (core.WithClock) when a test set one.
func (c *Config) LimiterOptions() []core.Option {
	var opts []core.Option
	opts = append(opts, c.inflightOptions()...)
	opts = append(opts, c.blockOptions()...)
	opts = append(opts, c.leaseOptions()...)
	return opts
}
