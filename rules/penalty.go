package rules

import (
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// A policy's penalty box: block_for, a duration for which a key the policy
// denies is refused, whatever its limits say meanwhile, on every instance
// sharing the store (core.WithBlockFor). Its tiers and overrides share it.

// decodeBlockFor reads a block_for: a Go duration from 1µs to
// core.MaxPeriod, such as 15m.
func decodeBlockFor(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s, ok := d.str(v, at)
	if !ok {
		return
	}
	block, err := time.ParseDuration(s)
	if err != nil {
		d.fail(deref(v), at, nil, "block_for %q is not a duration such as 30s, 15m or 1h", s)
		return
	}
	if why := blockForProblem(block); why != "" {
		d.fail(deref(v), at, nil, "block_for %s: %s", s, why)
		return
	}
	p.BlockFor = block
}

// blockForProblem says what is wrong with a block_for, "" when nothing is.
func blockForProblem(block time.Duration) string {
	switch {
	case block <= 0:
		return "a penalty lasts a positive duration (leave block_for out for none)"
	case block > core.MaxPeriod:
		return "longer than the longest period a limit may have, " + core.MaxPeriod.String()
	case block%time.Microsecond != 0:
		return "not a whole number of microseconds"
	}
	return ""
}

// blockFor checks a policy's block_for, also for a Document built in Go.
func (v *validator) blockFor(p *Policy, i int, at *path) {
	if p.BlockFor == 0 || v.skip(i, "block_for") {
		return
	}
	if p.Unlimited {
		v.report(at.dot("block_for"), p.Pos, nil, "an unlimited policy denies nothing, so it blocks no one: remove block_for or unlimited")
		return
	}
	if why := blockForProblem(p.BlockFor); why != "" {
		v.report(at.dot("block_for"), p.Pos, core.ErrInvalidOption, "block_for %s: %s", p.BlockFor, why)
	}
}

// blockForOption returns the limiter option of p's penalty box, nil when it
// has none.
func blockForOption(p *Policy) core.Option {
	if p.BlockFor <= 0 {
		return nil
	}
	return core.WithBlockFor(p.BlockFor)
}
