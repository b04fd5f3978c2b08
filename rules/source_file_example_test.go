package rules_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// ExampleWatchFile keeps a Set loaded from a rules file: an edit of the file
// changes the limit without a restart.
func ExampleWatchFile() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.yaml")
	save := func(version int, limit string) { // as an editor saves: a new file renamed over the old
		doc := fmt.Sprintf("schema: 1\nversion: %d\npolicies:\n  - {name: api, limits: [%s]}\n", version, limit)
		if err := os.WriteFile(path+".tmp", []byte(doc), 0o644); err != nil {
			panic(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			panic(err)
		}
	}
	save(1, "2/m")

	raw, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	doc, err := rules.Parse(raw, path)
	if err != nil {
		panic(err)
	}
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	reloads := make(chan rules.Reload, 8)
	set, err := rules.New(store, doc, rules.WithReloadHook(func(r rules.Reload) { reloads <- r }))
	if err != nil {
		panic(err)
	}
	watcher, err := rules.WatchFile(set, path)
	if err != nil {
		panic(err)
	}
	defer watcher.Close()
	<-reloads // WatchFile's first load

	limited, err := stdhttp.Middleware(set)
	if err != nil {
		panic(err)
	}
	app := limited(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	request := func() {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("version %d: RateLimit-Policy: %s\n", set.Version(), rec.Header().Get("RateLimit-Policy"))
	}
	request()

	save(2, "5/m")
	select {
	case r := <-reloads:
		fmt.Printf("reloaded %s: version %d, error %v\n", filepath.Base(r.Source), r.Version, r.Err)
	case <-time.After(10 * time.Second):
		fmt.Println("no reload")
	}
	request()
	// Output:
	// version 1: RateLimit-Policy: "api";q=2;w=60
	// reloaded rules.yaml: version 2, error <nil>
	// version 2: RateLimit-Policy: "api";q=5;w=60
}
