package rules_test

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// An application's own source of documents (here one that failed to read
// its database) reports through the Set as WatchFile and WatchRedis do: the
// reload hook hears of the failure with the rules in force, which stay.
func ExampleSet_ReportRefusal() {
	doc, err := rules.Parse([]byte("schema: 1\nversion: 3\npolicies: [{name: api, limits: [100/s]}]\n"), "rules.yaml")
	if err != nil {
		panic(err)
	}
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	set, err := rules.New(store, doc,
		rules.WithLogger(slog.New(slog.DiscardHandler)),
		rules.WithReloadHook(func(r rules.Reload) { fmt.Println(r.Source, r.Version, r.Err) }))
	if err != nil {
		panic(err)
	}
	set.ReportRefusal("postgres", errors.New("connection refused"))
	set.TellReloadHook("postgres", errors.New("still refused")) // already logged by the source
	set.Logger().Info("logged where the Set logs")
	// Output:
	// postgres 3 connection refused
	// postgres 3 still refused
}
