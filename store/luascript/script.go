package luascript

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Script is one algorithm's Lua script: its source, to send with EVAL or
// SCRIPT LOAD, and the hex SHA1 of the source, to send with EVALSHA.
type Script struct {
	// Algorithm is the algorithm the script applies.
	Algorithm core.Algorithm
	// Source is the Lua source.
	Source string
	// SHA1 is the lowercase hex SHA1 digest of Source, as EVALSHA takes it.
	SHA1 string
}

var scripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range core.Algorithms() {
		var body string
		switch a {
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			body = luaMeter
		case core.FixedWindow:
			body = strings.NewReplacer("FITS", luaFixedWindowFits, "LIFE", "W[i] + period - now").Replace(luaWindows)
		case core.SlidingWindow:
			body = strings.NewReplacer("FITS", luaSlidingWindowFits, "LIFE", "W[i] + 2 * period - now").Replace(luaWindows)
		case core.SlidingLog:
			body = luaHead + luaSlidingLog + luaTail
		}
		src := "-- ratewarden " + a.String() + "\n" + body
		sum := sha1.Sum([]byte(src))
		s[a] = &Script{Algorithm: a, Source: src, SHA1: hex.EncodeToString(sum[:])}
	}
	return s
}()

// For returns the script that applies a, or an error wrapping
// core.ErrInvalidAlgorithm when a is not one of the six.
func For(a core.Algorithm) (*Script, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return scripts[a], nil
}

// Scripts returns the six scripts in the order of core.Algorithms, for a client
// that wants to SCRIPT LOAD them ahead of use.
func Scripts() []*Script {
	out := make([]*Script, 0, len(core.Algorithms()))
	for _, a := range core.Algorithms() {
		out = append(out, scripts[a])
	}
	return out
}

// String returns the script's algorithm and SHA1, e.g. "gcra 3f2a...".
func (s *Script) String() string { return fmt.Sprintf("%s %s", s.Algorithm, s.SHA1) }
