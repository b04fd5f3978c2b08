package keyfuncs_test

import (
	"net/textproto"

	"github.com/ratewarden/ratewarden/core"
)

// req is a core.HTTPRequest for tests. Header names are matched in their
// canonical form, as net/http does.
type req struct {
	remote string
	header map[string][]string
	method string
	path   string
	route  string
}

var _ core.HTTPRequest = (*req)(nil)

func newReq(remote string, kv ...string) *req {
	r := &req{remote: remote, header: map[string][]string{}, method: "GET", path: "/"}
	for i := 0; i+1 < len(kv); i += 2 {
		k := textproto.CanonicalMIMEHeaderKey(kv[i])
		r.header[k] = append(r.header[k], kv[i+1])
	}
	return r
}

func (r *req) RemoteAddr() string { return r.remote }
func (r *req) Header(name string) string {
	if v := r.header[textproto.CanonicalMIMEHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}
func (r *req) HeaderValues(name string) []string {
	return r.header[textproto.CanonicalMIMEHeaderKey(name)]
}
func (r *req) Method() string { return r.method }
func (r *req) Path() string   { return r.path }
func (r *req) Route() string  { return r.route }
