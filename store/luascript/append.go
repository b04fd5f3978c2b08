package luascript

import (
	"github.com/ratewarden/ratewarden/core"
)

// AppendCall is Encode for clients that take a command's arguments as []any
// (go-redis): it appends to dst what follows the script's SHA1 in an EVALSHA
// command (the number of keys, the keys, then ARGV) and returns the script to
// name. Numbers are appended as int64, and each limit's figures come boxed from
// a cache, so a decision allocates little. The checks and errors are Encode's.
func (c Config) AppendCall(dst []any, req core.TakeRequest) (*Script, []any, error) {
	var buf [8]*encodedLimit
	now, encs, err := c.check(req, buf[:0])
	if err != nil {
		return nil, dst, err
	}
	var kbuf [8]string
	keys := c.appendKeys(kbuf[:0], req, encs)
	dst = append(dst, len(keys))
	for _, k := range keys {
		dst = append(dst, k)
	}
	var t any = boxedServerTime
	if now >= 0 {
		t = now
	}
	dst = append(dst, t, req.Cost, ceilMillis(c.MinTTL))
	for _, e := range encs {
		a := e.argsAny(req.Algorithm)
		dst = append(dst, a[0], a[1])
	}
	return scripts[req.Algorithm], dst, nil
}

// boxedServerTime is serverTime as an interface value, boxed once.
var boxedServerTime any = int64(-1)
