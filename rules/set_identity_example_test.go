package rules_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The same rules written in YAML and in JSON are one document: one digest,
// whatever the comments, the layout or the order of keys.
func ExampleDocument_Digest() {
	yml, err := rules.Parse([]byte(`schema: 1
version: 7
policies:
  - name: api          # every client of the API
    limits: [100/s]
`), "rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	js, err := rules.Parse([]byte(`{"version": 7, "schema": 1, "policies": [{"limits": ["100/s"], "name": "api"}]}`), "rules.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(yml.Digest() == js.Digest(), len(yml.Digest()), rules.ShortDigest(yml.Digest()) == yml.Digest()[:12])
	// Output: true 64 true
}

// A Set refuses a document of the version in force with other rules, and
// an older one unless the downgrade is asked for.
func ExampleAllowDowngrade() {
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	v2, err := rules.Parse([]byte("schema: 1\nversion: 2\npolicies:\n  - {name: api, limits: [200/s]}\n"), "rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	set, err := rules.New(store, v2, rules.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	edited := []byte("schema: 1\nversion: 2\npolicies:\n  - {name: api, limits: [300/s]}\n")
	fmt.Println(errors.Is(set.Load(edited, "rules.yaml"), rules.ErrVersionConflict))
	v1 := []byte("schema: 1\nversion: 1\npolicies:\n  - {name: api, limits: [100/s]}\n")
	fmt.Println(errors.Is(set.Load(v1, "rules.yaml"), rules.ErrDowngrade))
	err = set.Load(v1, "rules.yaml", rules.AllowDowngrade())
	fmt.Println(err, set.Identity().Version)
	// Output:
	// true
	// true
	// <nil> 1
}

// A file watcher refuses a file older than the rules in force, and says why;
// WithFileDowngrades lets a deployment roll back by putting an older file in
// place.
func ExampleWithFileDowngrades() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.yaml")
	write := func(version int) {
		doc := fmt.Sprintf("schema: 1\nversion: %d\npolicies:\n  - {name: api, limits: [%d00/s]}\n", version, version)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	write(5)
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	doc, err := rules.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	set, err := rules.New(store, doc, rules.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	strict, err := rules.WatchFile(set, path)
	if err != nil {
		log.Fatal(err)
	}
	write(2)
	fmt.Println(errors.Is(strict.Reload(), rules.ErrDowngrade), set.Version()) // what SIGHUP does
	strict.Close()

	write(5)
	watcher, err := rules.WatchFile(set, path, rules.WithFileDowngrades())
	if err != nil {
		log.Fatal(err)
	}
	defer watcher.Close()
	write(2)
	fmt.Println(watcher.Reload(), set.Identity().Version)
	// Output:
	// true 5
	// <nil> 2
}
