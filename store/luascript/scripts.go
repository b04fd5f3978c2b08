package luascript

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Script is one Lua script a Store runs: its source, to send with EVAL or
// SCRIPT LOAD, and the hex SHA1 of the source, to send with EVALSHA. A Backend
// reads it and never changes it.
type Script struct {
	// Source is the Lua source.
	Source string
	// SHA1 is the lowercase hex SHA1 digest of Source, as EVALSHA takes it.
	SHA1 string
	// IntegerReply reports that the script replies with one integer, which a
	// Backend appends as one element; every other script replies with an
	// array of integers.
	IntegerReply bool
	name         string
}

// String returns the script's name (an algorithm, or "reset") and SHA1, e.g.
// "gcra 3f2a...".
func (s *Script) String() string { return s.name + " " + s.SHA1 }

func newScript(name, body string) *Script {
	src := "-- ratewarden " + name + "\n" + body
	sum := sha1.Sum([]byte(src))
	return &Script{Source: src, SHA1: hex.EncodeToString(sum[:]), name: name}
}

// scripts holds each algorithm's script, indexed by the algorithm.
var scripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range core.Algorithms() {
		var body string
		switch a {
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			body = luaMeter
		case core.FixedWindow:
			body = strings.NewReplacer("CARRY", luaFixedWindowCarry, "FITS", luaFixedWindowFits, "REFUND", luaFixedWindowRefund, "STATELIFE", "st + period - now", "LIFE", "ws + period - now").Replace(luaWindows)
		case core.SlidingWindow:
			body = strings.NewReplacer("CARRY", luaSlidingWindowCarry, "FITS", luaSlidingWindowFits, "REFUND", luaSlidingWindowRefund, "STATELIFE", "st + 2 * period - now", "LIFE", "ws + 2 * period - now").Replace(luaWindows)
		case core.SlidingLog:
			body = luaSlidingLog
		}
		s[a] = newScript(a.String(), body)
	}
	return s
}()

// oneScripts holds, for the token bucket, the leaky bucket and GCRA, the
// script of a request of one limit without a penalty box: luaMeterOneInt,
// which replies with one integer (decodeGap). Nearly every request is one.
var oneScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		s[a] = newScript(a.String()+"+one", luaMeterOneInt)
		s[a].IntegerReply = true
	}
	return s
}()

// resetScript deletes its KEYS and replies {the number deleted}.
var resetScript = newScript("reset", luaReset)

// Scripts returns every script a Store may send: the six algorithms' in the
// order of core.Algorithms, then the reset script, then those of the penalty
// box (BlockScripts), calendar quotas (CalendarScripts), settles
// (SettleScripts), in-flight limits (InFlightScripts) and token leases
// (LeaseScripts), then the meters' scripts of a request of one limit, which
// reply with one integer (Script.IntegerReply). A binding may SCRIPT LOAD them
// ahead of use; it need not, as a Backend falls back to EVAL.
func Scripts() []*Script {
	out := make([]*Script, 0, 52)
	for _, a := range core.Algorithms() {
		out = append(out, scripts[a])
	}
	out = append(out, resetScript)
	out = append(out, BlockScripts()...)
	out = append(out, CalendarScripts()...)
	out = append(out, SettleScripts()...)
	out = append(out, InFlightScripts()...)
	out = append(out, LeaseScripts()...)
	for _, a := range core.Algorithms() {
		if oneScripts[a] != nil {
			out = append(out, oneScripts[a])
		}
	}
	return out
}
