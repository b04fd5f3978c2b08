package adaptertest_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// An app under test turns the PeerHeader into its peer address, so one test
// client can act as many clients; HTTPServer runs a net/http app for the
// suite. An adapter's own test then runs the table with
// adaptertest.Run(t, adaptertest.Adapter{New: newApp, Disconnects: true}).
func ExampleHTTPServer() {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.SetPeer(r)
		fmt.Fprintf(w, "peer %s", r.RemoteAddr)
	})
	srv := adaptertest.HTTPServer(app)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set(adaptertest.PeerHeader, "203.0.113.9:4711")
	resp, err := srv.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 peer 203.0.113.9:4711
}
