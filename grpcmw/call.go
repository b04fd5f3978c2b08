package grpcmw

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"unsafe"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// call is one gRPC call (or one received message of a stream) as the HTTP
// policy sees it: the keyfuncs.Request view of the call, and the
// httplimit.ResponseWriter and HeaderSetter that capture what the policy
// answers, for the interceptor to translate into gRPC. It is pooled: a call
// costs no allocation to decide.
type call struct {
	ctx    context.Context
	method string
	msg    any  // the received message being decided (WithMessages)
	hasMsg bool // msg is set: a message's decision, not the call's

	// What the policy wrote.
	status   int           // WriteHeader's status; 0 when nothing was answered
	decided  bool          // the limiter decided: decision and policy are set
	decision core.Decision // the decision behind the headers
	policy   string        // the name of the limits that decided
	fields   [maxFields]field
	nf       int
	buf      []byte // the fields' values, end to end
}

// field is one rate-limit field the policy set: its metadata key (lower
// case) and where its value lies in call.buf.
type field struct {
	key        string
	start, end int
}

// maxFields is the most fields the policy sets on one response: Retry-After,
// the three X-RateLimit-* and the two IETF fields.
const maxFields = 6

var calls = sync.Pool{New: func() any { return &call{buf: make([]byte, 0, 128)} }}

// newCall returns a pooled call for the call of ctx to fullMethod.
func newCall(ctx context.Context, fullMethod string) *call {
	c := calls.Get().(*call)
	c.ctx, c.method = ctx, fullMethod
	return c
}

// release hands c back to the pool, keeping nothing of the call.
func (c *call) release() {
	*c = call{buf: c.buf[:0]}
	if cap(c.buf) > 4<<10 {
		c.buf = nil // a long RateLimit field: let it go
	}
	calls.Put(c)
}

// RemoteAddr is the peer's address: its IP (without the port, which no key
// uses) for a TCP peer, else what the connection reports (a unix-socket
// peer's "@" or path, bufconn's "bufconn"), which keyfuncs.IP refuses as it
// refuses a non-IP peer over HTTP.
func (c *call) RemoteAddr() string {
	p, ok := peer.FromContext(c.ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	return httplimit.PeerAddr(p.Addr)
}

// PeerIP is the peer's IP address for a TCP peer (keyfuncs.PeerIPRequest),
// so keyfuncs.IP keys the call from the address itself instead of writing
// it out and parsing it back; ok is false for any other peer, which
// RemoteAddr then describes.
func (c *call) PeerIP() (netip.Addr, bool) {
	p, ok := peer.FromContext(c.ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}, false
	}
	return httplimit.PeerIP(p.Addr)
}

// Header returns the first value of the incoming metadata entry name (gRPC
// keys are lower case: "X-Api-Key" reads "x-api-key").
func (c *call) Header(name string) string {
	if v := c.values(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// HeaderValues returns every value of the incoming metadata entry name.
func (c *call) HeaderValues(name string) []string { return c.values(name) }

// values looks name up in the incoming metadata. A name of up to 64 bytes is
// lower-cased on the stack: grpc-go only compares the key it is given, and
// keeps none of it. grpc-go copies the values it returns, so a missing entry
// costs nothing and a present one one slice.
func (c *call) values(name string) []string {
	if !needsLower(name) {
		return metadata.ValueFromIncomingContext(c.ctx, name)
	}
	if len(name) > 64 {
		return metadata.ValueFromIncomingContext(c.ctx, strings.ToLower(name))
	}
	var buf [64]byte
	for i := 0; i < len(name); i++ {
		buf[i] = lower(name[i])
	}
	return metadata.ValueFromIncomingContext(c.ctx, unsafe.String(&buf[0], len(name)))
}

func needsLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// Method is "POST": gRPC calls are HTTP/2 POSTs, and rules match them so.
func (c *call) Method() string { return "POST" }

// Path is the full method, "/pkg.Service/Method".
func (c *call) Path() string { return c.method }

// EscapedPath is the full method as rules match it (keyfuncs.EscapedPathRequest),
// which they normalise as an HTTP path: gRPC does not percent-encode method
// names, so a '%' in one is a '%', written "%25" here, and "%2e%2e" is never
// read as "..". A real method ("/pkg.Service/Method": identifiers and dots)
// is in normal form already (rules compare paths without regard to ASCII
// case); only a name no service registers, which reaches an unknown-service
// handler alone, is rewritten by normalising ("/a/../b" is matched as "/b";
// a non-UTF-8 byte percent-encoded).
func (c *call) EscapedPath() string {
	if strings.IndexByte(c.method, '%') < 0 {
		return c.method
	}
	return strings.ReplaceAll(c.method, "%", "%25")
}

// Route is the full method, "/pkg.Service/Method": what the server routed
// the call by (keyfuncs.Route keys by it).
func (c *call) Route() string { return c.method }

// Host is the call's :authority (keyfuncs.HostRequest), for rules' hosts.
func (c *call) Host() string { return c.Header(":authority") }

// Context is the call's context: what authentication interceptors that ran
// before the limiter put there (keyfuncs.ContextValue reads it).
func (c *call) Context() context.Context { return c.ctx }

// WriteHeader records the status of the policy's answer.
func (c *call) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

// Write drops an answer's body: gRPC answers with a status and its details,
// which the interceptor builds from the decision.
func (c *call) Write(b []byte) (int, error) { return len(b), nil }

// SetHeaders copies the fields the policy set (httplimit.HeaderSetter), with
// lower-case names, and the decision behind them. Content-Type is gRPC's own
// and is not copied.
func (c *call) SetHeaders(h httplimit.Headers) {
	c.decision, c.policy, c.decided = h.Decision()
	for i := range h.Len() {
		name, value := h.At(i)
		key := metadataKey(name)
		if key == "" || c.nf == len(c.fields) {
			continue
		}
		start := len(c.buf)
		c.buf = append(c.buf, value...)
		c.fields[c.nf] = field{key: key, start: start, end: len(c.buf)}
		c.nf++
	}
}

// metadataKey returns the metadata key of a field the policy sets, "" for
// one gRPC does not carry as metadata (Content-Type).
func metadataKey(name string) string {
	switch name {
	case httplimit.HeaderRetryAfter:
		return "retry-after"
	case httplimit.HeaderXRateLimitLimit:
		return "x-ratelimit-limit"
	case httplimit.HeaderXRateLimitRemain:
		return "x-ratelimit-remaining"
	case httplimit.HeaderXRateLimitReset:
		return "x-ratelimit-reset"
	case httplimit.HeaderRateLimitPolicy:
		return "ratelimit-policy"
	case httplimit.HeaderRateLimit:
		return "ratelimit"
	case httplimit.HeaderConcurrencyLimit:
		return "x-concurrency-limit"
	}
	return ""
}

// headerMD returns the fields as header metadata, nil when there are none.
// grpc-go keeps what it is handed until the header is written, after the
// call is released: the values are copied into a block of their own (one
// allocation, with the slices the map holds), and the map is new.
func (c *call) headerMD() metadata.MD {
	if c.nf == 0 {
		return nil
	}
	blk := new(mdBlock)
	var vals string
	if len(c.buf) <= len(blk.buf) {
		n := copy(blk.buf[:], c.buf)
		vals = unsafe.String(&blk.buf[0], n) // blk.buf is never written again
	} else {
		vals = string(c.buf) // a long RateLimit field (a Group's)
	}
	md := make(metadata.MD, c.nf)
	for i, f := range c.fields[:c.nf] {
		blk.vals[i] = vals[f.start:f.end]
		md[f.key] = blk.vals[i : i+1 : i+1]
	}
	return md
}

// mdBlock holds the values of one call's header metadata: the slices the
// map holds, and, when they fit, the bytes of the values.
type mdBlock struct {
	vals [maxFields]string
	buf  [128]byte
}

// field returns the value of the field of key, "" when it is not set.
func (c *call) field(key string) string {
	for _, f := range c.fields[:c.nf] {
		if f.key == key {
			return string(c.buf[f.start:f.end])
		}
	}
	return ""
}

// View returns the keyfuncs.Request the interceptors hand to key functions
// for a call of ctx to fullMethod ("/pkg.Service/Method"), with ctx the
// call's context as the server gave it (carrying its peer and incoming
// metadata): to test a key function, or to compute the key a client is
// limited by, for Policy.Reset.
func View(ctx context.Context, fullMethod string) keyfuncs.Request {
	return &call{ctx: ctx, method: fullMethod}
}

// Message returns the received message a decision is about, when the
// interceptor decides each message of a stream (WithMessages): for a cost
// function, httplimit.WithCost, that weighs messages. It returns false for
// the decision that opens a call, and for a Request this package did not
// make.
func Message(r keyfuncs.Request) (any, bool) {
	c, ok := r.(*call)
	if !ok || !c.hasMsg {
		return nil, false
	}
	return c.msg, true
}
