package rules

import (
	"bytes"
	_ "embed" // schema.json
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// SchemaVersion is the version of the rules schema this package reads: a
// document's "schema" field. A document written for a newer schema is refused
// (it may use fields this version would ignore or misread).
const SchemaVersion = 1

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a rules document, the
// one docs/rules.md publishes as rules/schema.json: editors and CI jobs can
// check a document's shape with it before Parse reads it. Parse checks all
// the schema says and more (limits against their algorithm, route patterns,
// the names replaces refers to, unreachable policies). Each call returns a
// new copy.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// Document is a parsed, validated rules document: the policies that say which
// limit applies to which request. Parse builds one; the defaults block is
// already applied to every policy. A Document is a plain value: treat it as
// read-only once built.
type Document struct {
	// Schema is the rules schema version the document is written for
	// (SchemaVersion).
	Schema int
	// Version is the document's own version, a positive integer the operator
	// raises on every change: with the digest (Digest), the document's
	// identity. A push to Redis and a file reload refuse a document of the
	// version in force with other rules, and an older one (a file reload
	// unless allowed: WithFileDowngrades).
	Version int64
	// Policies are the document's policies, in document order.
	Policies []Policy
}

// Pos is a position in a document: 1-based line and column.
type Pos struct {
	Line, Column int
}

// String returns "line:column".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Policy is one named limit: which requests it matches, whose key counts, and
// the limits that apply.
type Policy struct {
	// Name names the policy: in headers (RateLimit-Policy), in problem bodies,
	// in metrics, in replaces lists and in the operator's tool. 1 to 40 bytes
	// of letters, digits, '-', '_' and '.'.
	Name string
	// Pos is where the policy starts in the document.
	Pos Pos
	// Match says which requests the policy applies to; the zero Match
	// matches every request.
	Match Match
	// Key says whose requests count together.
	Key Key
	// Algorithm is the algorithm of the policy's limits.
	Algorithm core.Algorithm
	// Limits are the policy's limits (all must admit); with Tiers, the
	// default tier's. Empty only when Unlimited.
	Limits []core.Limit
	// Tiers, when not nil, picks the limits per request.
	Tiers *Tiers
	// Cost is what one request spends (default 1).
	Cost int64
	// FailClosed answers 503 when the store fails, instead of letting the
	// request pass (fail open, the default).
	FailClosed bool
	// DryRun decides and reports every request but denies none.
	DryRun bool
	// CountFailuresOnly gives a request's cost back when its response status
	// is below 400 ("count: failures"): only failed attempts count.
	CountFailuresOnly bool
	// Unlimited exempts the requests the policy matches: it has no limits,
	// and with Replaces it lifts the policies it replaces (an exemption,
	// such as a health check).
	Unlimited bool
	// Replaces names policies that do not apply to a request this policy
	// applies to.
	Replaces []string
	// Overrides give named keys their own limits, or no limit, or none at
	// all (blocked).
	Overrides []Override
	// TimeZone ("time_zone") is the IANA time zone of the policy's calendar
	// limits that name none (N/month, N/week; N/day becomes a calendar day
	// in it); Parse sets it into those limits (a Document built in Go sets
	// its limits' Zone itself).
	TimeZone string
	// AnchorDay ("anchor_day") is the day the policy's monthly limits start
	// on (1 to 31; a month with fewer days starts on its last), or its
	// weekly limits' ISO weekday (1 to 7); Parse sets it into those limits
	// (a Document built in Go sets its limits' AnchorDay itself).
	AnchorDay int
	// BlockFor ("block_for") is the policy's penalty box: a key it denies is
	// refused for this long, whatever its limits say meanwhile (see
	// core.WithBlockFor); 0 for none.
	BlockFor time.Duration
	// Settle ("settle") settles each request's cost after its response, at
	// the cost a response header names (see Settle); nil for none.
	Settle *Settle
	// Concurrency ("concurrency", with "lease") is the policy's in-flight
	// limit: at most Slots requests of a key running at once, beside its
	// limits (see core.InFlight); the zero InFlight when it has none.
	Concurrency core.InFlight
	// ConcurrencyQueue ("concurrency_queue") is how many requests may wait
	// for an in-flight slot on an instance (httplimit.WithInFlightWait);
	// 0 refuses at once. ConcurrencyWait ("concurrency_wait") is how long
	// one waits (DefaultConcurrencyWait when 0).
	ConcurrencyQueue int
	ConcurrencyWait  time.Duration
	// TokenLease ("lease_tokens", with "lease_ttl") leases a hot key's
	// tokens from the store in batches (see core.TokenLease; not the
	// in-flight slot's lease); the zero TokenLease when it has none. A
	// lease_tokens alone takes DefaultLeaseTTL, or the shortest period if
	// shorter.
	TokenLease core.TokenLease
}

// Match says which requests a policy applies to. Within a field, any listed
// value matches (or); across fields, every field that is set must match
// (and). An empty field matches every request.
type Match struct {
	// Paths are route patterns matched against the normalised request path:
	// "/api/items/{id}" ({name} is one segment), "/static/{rest...}" (the
	// rest of the path, possibly empty).
	Paths []string
	// Prefixes are path prefixes, matched at a segment boundary: "/api"
	// matches "/api" and "/api/items", not "/apis".
	Prefixes []string
	// Methods are request methods, upper case.
	Methods []string
	// Hosts are request hosts, lower case, without a port.
	Hosts []string
	// Headers must all hold.
	Headers []HeaderMatch
}

// HeaderMatch is a condition on a request header: present (any value), or
// equal to Value.
type HeaderMatch struct {
	// Name is the header's name (case-insensitive).
	Name string
	// Value is the value the header must equal, when Present is false.
	Value string
	// Present, when true, asks only that the header be there.
	Present bool
}

// Key says whose requests count together: the parts' values, joined.
type Key struct {
	// Parts are composed in order (keyfuncs.Compose); one part is the usual case.
	Parts []KeyPart
}

// KeyKind is the source of one part of a key.
type KeyKind uint8

// The sources of a key part.
const (
	// KeyIP is the client IP (keyfuncs.IP, with the trusted proxies the
	// application configures).
	KeyIP KeyKind = iota + 1
	// KeyFrameworkIP is the framework's own client IP (keyfuncs.FrameworkIP).
	KeyFrameworkIP
	// KeyHeader is the value of the header Name.
	KeyHeader
	// KeyJWTClaim is the claim Name of the request's verified JWT.
	KeyJWTClaim
	// KeyContext is the context value the application registered as Name
	// (or, unregistered, stored under the string Name, as Gin's c.Set and
	// Fiber's c.Locals do).
	KeyContext
	// KeyRoute is the matched route pattern.
	KeyRoute
	// KeyMethod is the request method.
	KeyMethod
)

// KeyPart is one source of a key.
type KeyPart struct {
	// Kind is where the value comes from.
	Kind KeyKind
	// Name is the header, claim or context value's name (KeyHeader,
	// KeyJWTClaim, KeyContext); empty otherwise.
	Name string
}

// Tiers picks a policy's limits per request by a value of the request (a
// plan in a header, a JWT claim, a context value).
type Tiers struct {
	// By is what names the tier: a KeyHeader, KeyJWTClaim or KeyContext part.
	By KeyPart
	// Default is the tier a request gets whose value is missing or names no
	// tier; it is one of Levels.
	Default string
	// Levels are the tiers, in document order.
	Levels []Tier
}

// Tier is one set of limits of a tiered policy.
type Tier struct {
	// Name is the tier's name, the value of By that picks it.
	Name string
	// Limits are the tier's limits.
	Limits []core.Limit
}

// Override gives one key of a policy its own treatment: its own limits, no
// limit (Unlimited), or none at all (Blocked: 429, with a quota of 0).
// Exactly one of Limits, Unlimited and Blocked is set.
type Override struct {
	// Key is the key exactly as the policy's key function produces it.
	Key string
	// Limits, when set, replace the policy's limits for Key.
	Limits []core.Limit
	// Unlimited exempts Key from the policy.
	Unlimited bool
	// Blocked denies every request of Key without asking the store.
	Blocked bool
	// Pos is where the override is written.
	Pos Pos
}
