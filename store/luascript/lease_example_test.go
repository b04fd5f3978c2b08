package luascript_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// A token lease (core.WithTokenLease) asks for up to want tokens in one
// call: the request's cost is the least it takes, and the script grants
// what the limits admit (here, the reply grants all 20 of a fresh key).
func ExampleStore_LeaseTokens() {
	store, err := luascript.New(grantAll{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := store.LeaseTokens(context.Background(), core.TakeRequest{
		Namespace: "api", Key: "tenant-7", Algorithm: core.GCRA,
		Limits: []core.Limit{core.PerSecond(100)}, Cost: 1,
	}, 20, 100*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Granted, g.TTL, g.Decision.Remaining)
	// Output:
	// KEYS: [rw:{api:tenant-7}:g]
	// ARGV: [1 10000 1000000 -1 0 20]
	// 20 100ms 80
}

// grantAll is a Backend that prints the call and replies as the lease
// script does for a fresh key: all of want granted, at 1,700,000,000 s.
type grantAll struct{}

func (grantAll) Eval(_ context.Context, _ *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	fmt.Println("KEYS:", keys)
	fmt.Println("ARGV:", args)
	want, _ := strconv.ParseInt(args[len(args)-1], 10, 64)
	return append(dst, want, 1_700_000_000_000_000, 0), nil
}
