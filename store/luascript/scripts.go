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
	// IntegerReply reports that the script replies with one integer, which
	// an IntegerReplier's Eval appends as one element (a Store sends such a
	// script through no other Backend); every other script replies with an
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
			body = fixedWindowReplacer("").Replace(luaWindows)
		case core.SlidingWindow:
			body = slidingWindowReplacer("").Replace(luaWindows)
		case core.SlidingLog:
			body = luaSlidingLog
		}
		s[a] = newScript(a.String(), body)
	}
	return s
}()

// oneScripts holds, for every algorithm but the sliding log, the script of a
// request of one limit without a penalty box (for a window, one whose figures
// pack: packsWindow), which replies with one integer (decodeGap):
// luaMeterOneInt and luaWindowOneInt. Nearly every request is one.
var oneScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	windowHead := strings.NewReplacer("FIG1", "rate", "FIG2", "period").Replace(luaOneHead)
	for _, a := range core.Algorithms() {
		var body string
		switch a {
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			body = luaMeterOneInt
		case core.FixedWindow:
			body = windowHead + fixedWindowReplacer("count").Replace(luaWindowOneInt)
		case core.SlidingWindow:
			body = windowHead + slidingWindowReplacer("cur * 2 * rate + prev").Replace(luaWindowOneInt)
		default:
			continue
		}
		s[a] = newScript(a.String()+"+one", body)
		s[a].IntegerReply = true
	}
	return s
}()

// fixedWindowReplacer and slidingWindowReplacer fill luaWindows' and
// luaWindowOneInt's blanks for each window, gap being the count or counts
// luaWindowOneInt replies.
func fixedWindowReplacer(gap string) *strings.Replacer {
	return strings.NewReplacer("CARRY", luaFixedWindowCarry, "FITS", luaFixedWindowFits, "REFUND", luaFixedWindowRefund,
		"STATELIFE", "st + period - now", "LIFE", "ws + period - now", "GAP", gap)
}

func slidingWindowReplacer(gap string) *strings.Replacer {
	return strings.NewReplacer("CARRY", luaSlidingWindowCarry, "FITS", luaSlidingWindowFits, "REFUND", luaSlidingWindowRefund,
		"STATELIFE", "st + 2 * period - now", "LIFE", "ws + 2 * period - now", "GAP", gap)
}

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
