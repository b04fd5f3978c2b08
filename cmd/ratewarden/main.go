package main

import (
	"context"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() {
	redis.SetLogger(quietLogger{}) // the tool reports Redis's errors itself
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// quietLogger drops go-redis's own log lines (failed dials, which the tool
// reports as its error).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
