package redistest_test

import (
	"fmt"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// A test calls redistest.Start(t) for a single server, or
// redistest.StartCluster(t) for a cluster, and connects its client to the
// returned address. When redis-server is missing, the test is skipped with this
// hint (or fails, when CI=true).
func Example() {
	fmt.Println(redistest.InstallHint)
	// Output:
	// install it with: apt-get install -y redis-server (or set REDIS_URL / REDIS_CLUSTER_ADDRS)
}
