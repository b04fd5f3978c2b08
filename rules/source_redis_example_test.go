package rules_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// offline is a RedisBackend of a Redis that cannot be reached. A program
// passes a binding instead: redisstore.NewRulesBackend (go-redis) or
// rueidisstore.NewRulesBackend (rueidis).
type offline struct{}

func (offline) Eval(context.Context, string, string, []string, []string) ([]string, error) {
	return nil, errors.New("dial tcp 10.0.0.9:6379: connect: connection refused")
}

func (offline) Subscribe(context.Context, string, func(), func(string)) error {
	return errors.New("dial tcp 10.0.0.9:6379: connect: connection refused")
}

// An instance that starts while Redis is down loads its fallback file, and
// its reload hook hears why; it keeps trying Redis until Close.
func ExampleWatchRedis() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fallback := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(fallback, []byte("schema: 1\nversion: 3\npolicies:\n  - {name: api, limits: [100/s]}\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	builtIn, err := rules.Parse([]byte("schema: 1\nversion: 1\npolicies:\n  - {name: api, limits: [10/s]}\n"), "built-in")
	if err != nil {
		log.Fatal(err)
	}
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	set, err := rules.New(store, builtIn,
		rules.WithLogger(slog.New(slog.DiscardHandler)),
		rules.WithReloadHook(func(r rules.Reload) {
			fmt.Printf("source %s, version %d, err: %v\n", filepath.Base(r.Source), r.Version, r.Err)
		}))
	if err != nil {
		log.Fatal(err)
	}

	w, err := rules.WatchRedis(set, offline{}, rules.WithFallbackFile(fallback))
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	fmt.Println("in force:", set.Version(), set.Document().Policies[0].Limits)
	// Output:
	// source redis, version 1, err: ratewarden: redis failed: read rw:{rules}:doc: dial tcp 10.0.0.9:6379: connect: connection refused
	// source rules.yaml, version 3, err: <nil>
	// in force: 3 [100/s]
}

// PushRules validates a document before it sends it: a document with
// problems never reaches Redis.
func ExamplePushRules() {
	_, err := rules.PushRules(context.Background(), offline{}, []byte("schema: 1\nversion: 4\npolicies:\n  - {name: api, limits: [100/x]}\n"))
	fmt.Println(errors.Is(err, rules.ErrInvalidRules))
	fmt.Println(err)
	// Output:
	// true
	// push:4:26: policies[0].limits[0]: ratewarden: invalid limit: "100/x": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)
}
