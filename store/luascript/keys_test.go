package luascript

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A key names the namespace, the client, the algorithm and, for several
// limits, their number and an index, never the limits' figures: an edited
// limit finds the state its old figures wrote.
func TestKeysNameNoFigures(t *testing.T) {
	var c config
	keys := func(alg core.Algorithm, limits ...core.Limit) []string {
		encs := make([]*encodedLimit, len(limits))
		for i, l := range limits {
			e, err := encodeLimit(l)
			must.NoError(t, err)
			encs[i] = e
		}
		return c.appendKeys(nil, core.TakeRequest{Namespace: "api", Key: "k", Algorithm: alg, Limits: limits}, encs)
	}
	expect.Equal(t, []string{"{api:k}:g"}, keys(core.GCRA, core.PerSecond(10)))
	tier := c.appendKeys(nil, core.TakeRequest{Namespace: "api\x00api/pro", Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}}, []*encodedLimit{nil})
	expect.Equal(t, []string{"{api%00api/pro:k}:g"}, tier, "a tier's namespace: NUL escaped")
	expect.Equal(t, keys(core.GCRA, core.PerSecond(10)), keys(core.GCRA, core.PerHour(3).WithBurst(7)), "an edit keeps the key")
	expect.NotEqual(t, keys(core.GCRA, core.PerSecond(10)), keys(core.TokenBucket, core.PerSecond(10)), "another algorithm, another key")
	two := keys(core.FixedWindow, core.PerSecond(10), core.PerHour(100))
	expect.Equal(t, []string{"{api:k}:f:2:0", "{api:k}:f:2:1"}, two)
	expect.Equal(t, two, keys(core.FixedWindow, core.PerSecond(20), core.Every(100, 24*time.Hour)))
	for _, k := range keys(core.FixedWindow, core.PerSecond(1), core.PerSecond(2), core.PerSecond(3)) {
		expect.NotContains(t, two, k, "three limits are another identity")
	}
}

// Every algorithm has its own code, a letter that cannot be read as part of
// a tag.
func TestAlgorithmCodes(t *testing.T) {
	seen := map[string]core.Algorithm{}
	for _, alg := range core.Algorithms() {
		code := algorithmCodes[alg]
		must.Regexp(t, `^[a-z]$`, code, alg.String())
		_, dup := seen[code]
		must.False(t, dup, "%s and %s share %q", alg, seen[code], code)
		seen[code] = alg
	}
}
