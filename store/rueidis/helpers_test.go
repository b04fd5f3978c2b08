package rueidisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/luascript"
)

// newClient returns a rueidis client of addrs (one server, or a cluster's
// masters), closed when t ends.
func newClient(t testing.TB, addrs ...string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// testPrefix is a prefix no other test uses, so tests may share a server.
func testPrefix() string {
	return fmt.Sprintf("rwtest%x:", rand.Uint64())
}

func newStore(t testing.TB, c rueidis.Client, opts ...luascript.Option) *luascript.Store {
	t.Helper()
	s, err := New(c, append([]luascript.Option{luascript.WithPrefix(testPrefix())}, opts...)...)
	require.NoError(t, err)
	return s
}

// commandCalls sums, over every node of c, the calls of each command in INFO
// commandstats (cmdstat_evalsha -> calls), leaving out INFO itself.
func commandCalls(t testing.TB, c rueidis.Client) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, node := range c.Nodes() {
		info, err := node.Do(context.Background(), node.B().Info().Section("commandstats").Build()).ToString()
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok {
				continue
			}
			name = strings.TrimPrefix(name, "cmdstat_")
			n, err := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
			require.NoError(t, err, line)
			if name != "info" {
				out[name] += n
			}
		}
	}
	return out
}

// roundTrips is what diff (a diffCalls result) costs in round trips per
// decision: the top-level commands, leaving out those the scripts call inside
// Redis (which commandstats counts too), found in the scripts' sources, and
// the handshake of a connection rueidis opens lazily (HELLO, CLIENT), which is
// paid once per connection, not per decision.
func roundTrips(diff map[string]int64) map[string]int64 {
	inner := map[string]bool{"hello": true, "client": true}
	for _, s := range luascript.Scripts() {
		for _, m := range scriptCall.FindAllStringSubmatch(s.Source, -1) {
			inner[strings.ToLower(m[1])] = true
		}
	}
	out := map[string]int64{}
	for k, v := range diff {
		if !inner[k] {
			out[k] = v
		}
	}
	return out
}

var scriptCall = regexp.MustCompile(`redis\.p?call\(['"]([A-Za-z]+)['"]`)

func diffCalls(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}
