package luascript

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// encodedLimit is one limit as the scripts and the keys take it, formatted
// once: limits come from configuration, so the same few are encoded on every
// request.
type encodedLimit struct {
	// spec is the key's part for the limit: "<rate>/<period µs>/<burst>".
	spec string
	// meter holds the meters' figures (interval, tau); window the windows'
	// and the sliding log's (rate, period).
	meter, window       [2]string
	meterAny, windowAny [2]any
}

// args returns the two figures a's script takes for the limit.
func (e *encodedLimit) args(a core.Algorithm) *[2]string {
	if a.OneWord() {
		return &e.meter
	}
	return &e.window
}

// argsAny is args boxed, for clients that take []any.
func (e *encodedLimit) argsAny(a core.Algorithm) *[2]any {
	if a.OneWord() {
		return &e.meterAny
	}
	return &e.windowAny
}

// limitCache maps core.Figures to *encodedLimit, for up to maxCachedLimits
// limits; others are encoded on each use.
var (
	limitCache     sync.Map
	limitCacheSize atomic.Int64
)

const maxCachedLimits = 4096

// encodeLimit checks l as core does (an error wraps core.ErrInvalidLimit) and
// returns its encoding.
func encodeLimit(l core.Limit) (*encodedLimit, error) {
	f, err := l.Figures()
	if err != nil {
		return nil, err
	}
	if v, ok := limitCache.Load(f); ok {
		return v.(*encodedLimit), nil
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	e := &encodedLimit{
		spec:   itoa(f.Rate) + "/" + itoa(f.Period) + "/" + itoa(f.Burst),
		meter:  [2]string{itoa(f.Interval), itoa(f.Tau)},
		window: [2]string{itoa(f.Rate), itoa(f.Period)},
	}
	e.meterAny = [2]any{e.meter[0], e.meter[1]}
	e.windowAny = [2]any{e.window[0], e.window[1]}
	if limitCacheSize.Load() < maxCachedLimits {
		if _, loaded := limitCache.LoadOrStore(f, e); !loaded {
			limitCacheSize.Add(1)
		}
	}
	return e, nil
}
