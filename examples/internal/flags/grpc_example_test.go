package flags_test

import (
	"fmt"
	"os"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func ExampleParseGRPC() {
	c, err := flags.ParseGRPC("grpc", []string{"-limit", "100/m", "-key", "header:x-api-key", "-metrics-addr", "127.0.0.1:9090"}, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Addr, c.Limit, c.Key, c.MetricsAddr)
	// Output: :50051 100/m header:x-api-key 127.0.0.1:9090
}

func ExampleLoadGRPC() {
	// -metrics is the HTTP servers' flag; the gRPC server has -metrics-addr.
	_, code := flags.LoadGRPC("grpc", []string{"-metrics-addr", "9090"}, os.Stdout)
	fmt.Println("exit status", code)
	// Output:
	// grpc: -metrics-addr "9090": want HOST:PORT or :PORT
	// run grpc -h for the flags
	// exit status 2
}
