package luascript

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// AppendCall is Encode for clients that take a command's arguments as []any
// (go-redis): it appends to dst what follows the script's SHA1 in an EVALSHA
// command (the number of keys, the keys, then ARGV) and returns the script to
// name. Numbers are appended as int64, and each limit's figures come boxed from
// a cache, so a decision allocates little. The checks and errors are Encode's.
func (c Config) AppendCall(dst []any, req core.TakeRequest) (*Script, []any, error) {
	if err := c.Validate(); err != nil {
		return nil, dst, err
	}
	now := int64(-1)
	if c.CallerClock {
		now = core.Micros(req.Now)
	}
	if err := checkRequest(req, now, c.CallerClock); err != nil {
		return nil, dst, err
	}
	keys := c.keys(req)
	dst = append(dst, len(keys))
	for _, k := range keys {
		dst = append(dst, k)
	}
	dst = append(dst, now, req.Cost, ceilMillis(c.MinTTL))
	for _, l := range req.Limits {
		f, err := l.Figures()
		if err != nil {
			return nil, dst, err
		}
		b := boxedFigures(f)
		dst = append(dst, b[:]...)
	}
	return scripts[req.Algorithm], dst, nil
}

// figureCache holds the boxed figures of the limits seen, up to
// maxCachedFigures of them (limits come from configuration, so few).
var (
	figureCache     sync.Map // core.Figures -> *[5]any
	figureCacheSize atomic.Int64
)

const maxCachedFigures = 4096

func boxedFigures(f core.Figures) *[5]any {
	if v, ok := figureCache.Load(f); ok {
		return v.(*[5]any)
	}
	b := &[5]any{
		strconv.FormatInt(f.Rate, 10), strconv.FormatInt(f.Period, 10), strconv.FormatInt(f.Burst, 10),
		strconv.FormatInt(f.Interval, 10), strconv.FormatInt(f.Tau, 10),
	}
	if figureCacheSize.Load() < maxCachedFigures {
		if _, loaded := figureCache.LoadOrStore(f, b); !loaded {
			figureCacheSize.Add(1)
		}
	}
	return b
}
