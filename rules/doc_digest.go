package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// ShortDigestLen is how many hex digits of a digest ShortDigest keeps: what
// the logs, the metrics and the operator's tool print.
const ShortDigestLen = 12

// Digest returns the document's content digest: the lower-case hex SHA-256 of
// its canonical form, 64 digits. With the version it identifies a document
// (see Identity): two documents of one version must have one digest, and
// every place a document enters (a push to Redis, a file reload, a watcher
// following Redis) refuses, or says, when they do not.
//
// The canonical form is the document as Parse reads it, not as it is
// written: JSON, without spaces, with the keys in a fixed order and every
// field at its zero value left out, of the schema and the policies in
// document order (each policy with the defaults block applied, limits as
// rate, period in nanoseconds and effective burst). Comments, layout, key
// order, YAML or JSON, a defaults block or the same values written in every
// policy, and positions do not change it; the order of lists does (policies
// decide in order). The version is not part of it: the same rules pushed
// again under a new version keep their digest, which tells an operator that
// only the number changed. docs/rules.md gives the form in full.
func (d *Document) Digest() string {
	sum := sha256.Sum256(d.canonical())
	return hex.EncodeToString(sum[:])
}

// ShortDigest returns the first ShortDigestLen digits of digest, as people
// read it; a shorter digest (or "") is returned whole.
func ShortDigest(digest string) string {
	if len(digest) > ShortDigestLen {
		return digest[:ShortDigestLen]
	}
	return digest
}

// canonical returns the document's canonical form (see Digest).
func (d *Document) canonical() []byte {
	c := canonDoc{Schema: d.Schema, Policies: make([]canonPolicy, len(d.Policies))}
	for i := range d.Policies {
		c.Policies[i] = canonicalPolicy(&d.Policies[i])
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Only plain strings, numbers, booleans, slices and structs: it cannot fail.
	_ = enc.Encode(c)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// The canonical form's types: encoding/json writes struct fields in the
// order declared, so these declarations are the form's key order. A field
// added to Document, Policy or one of theirs must be added here (a test
// fails until it is), with omitempty, so that documents that leave it out
// keep their digest.
type (
	canonDoc struct {
		Schema   int           `json:"schema,omitempty"`
		Policies []canonPolicy `json:"policies,omitempty"`
	}
	canonPolicy struct {
		Name              string          `json:"name"`
		Match             *canonMatch     `json:"match,omitempty"`
		Key               []canonKeyPart  `json:"key,omitempty"`
		Algorithm         string          `json:"algorithm,omitempty"`
		Limits            []canonLimit    `json:"limits,omitempty"`
		Tiers             *canonTiers     `json:"tiers,omitempty"`
		Cost              int64           `json:"cost,omitempty"`
		FailClosed        bool            `json:"fail_closed,omitempty"`
		DryRun            bool            `json:"dry_run,omitempty"`
		CountFailuresOnly bool            `json:"count_failures_only,omitempty"`
		Unlimited         bool            `json:"unlimited,omitempty"`
		Replaces          []string        `json:"replaces,omitempty"`
		Overrides         []canonOverride `json:"overrides,omitempty"`
		TimeZone          string          `json:"time_zone,omitempty"`
		AnchorDay         int             `json:"anchor_day,omitempty"`
		BlockForNS        int64           `json:"block_for_ns,omitempty"`
		Settle            *canonSettle    `json:"settle,omitempty"`
		Concurrency       int64           `json:"concurrency,omitempty"`
		LeaseNS           int64           `json:"lease_ns,omitempty"`
		Queue             int             `json:"concurrency_queue,omitempty"`
		QueueWaitNS       int64           `json:"concurrency_wait_ns,omitempty"`
		LeaseTokens       int64           `json:"lease_tokens,omitempty"`
		LeaseTTLNS        int64           `json:"lease_ttl_ns,omitempty"`
	}
	canonMatch struct {
		Paths    []string      `json:"paths,omitempty"`
		Prefixes []string      `json:"prefixes,omitempty"`
		Methods  []string      `json:"methods,omitempty"`
		Hosts    []string      `json:"hosts,omitempty"`
		Headers  []canonHeader `json:"headers,omitempty"`
	}
	canonHeader struct {
		Name    string `json:"name"`
		Value   string `json:"value,omitempty"`
		Present bool   `json:"present,omitempty"`
	}
	canonKeyPart struct {
		Kind string `json:"kind"`
		Name string `json:"name,omitempty"`
	}
	canonLimit struct {
		Rate      int64  `json:"rate"`
		PeriodNS  int64  `json:"period_ns"`
		Burst     int64  `json:"burst"`
		Name      string `json:"name,omitempty"`
		Calendar  string `json:"calendar,omitempty"`
		Zone      string `json:"zone,omitempty"`
		AnchorDay int    `json:"anchor_day,omitempty"`
	}
	canonTiers struct {
		By      canonKeyPart `json:"by"`
		Default string       `json:"default"`
		Levels  []canonTier  `json:"levels"`
	}
	canonTier struct {
		Name   string       `json:"name"`
		Limits []canonLimit `json:"limits,omitempty"`
	}
	canonOverride struct {
		Key       string       `json:"key"`
		Limits    []canonLimit `json:"limits,omitempty"`
		Unlimited bool         `json:"unlimited,omitempty"`
		Blocked   bool         `json:"blocked,omitempty"`
	}
)

// canonicalPolicy returns p's canonical form.
func canonicalPolicy(p *Policy) canonPolicy {
	c := canonPolicy{
		Name: p.Name, Limits: canonicalLimits(p.Limits), Cost: p.Cost,
		FailClosed: p.FailClosed, DryRun: p.DryRun, CountFailuresOnly: p.CountFailuresOnly,
		Unlimited: p.Unlimited, Replaces: p.Replaces, TimeZone: p.TimeZone, AnchorDay: p.AnchorDay,
		BlockForNS: int64(p.BlockFor),
		Settle:     canonicalSettle(p.Settle),
	}
	c.Concurrency, c.LeaseNS = p.Concurrency.Slots, int64(p.Concurrency.Lease)
	c.Queue, c.QueueWaitNS = p.ConcurrencyQueue, int64(p.ConcurrencyWait)
	c.LeaseTokens, c.LeaseTTLNS = p.TokenLease.Max, int64(p.TokenLease.TTL)
	if m := p.Match; len(m.Paths)+len(m.Prefixes)+len(m.Methods)+len(m.Hosts)+len(m.Headers) > 0 {
		c.Match = &canonMatch{Paths: m.Paths, Prefixes: m.Prefixes, Methods: m.Methods, Hosts: m.Hosts}
		for _, h := range m.Headers {
			c.Match.Headers = append(c.Match.Headers, canonHeader(h))
		}
	}
	for _, k := range p.Key.Parts {
		c.Key = append(c.Key, canonicalKeyPart(k))
	}
	if p.Algorithm != 0 {
		c.Algorithm = p.Algorithm.String()
	}
	if t := p.Tiers; t != nil {
		c.Tiers = &canonTiers{By: canonicalKeyPart(t.By), Default: t.Default, Levels: make([]canonTier, len(t.Levels))}
		for i, l := range t.Levels {
			c.Tiers.Levels[i] = canonTier{Name: l.Name, Limits: canonicalLimits(l.Limits)}
		}
	}
	for _, o := range p.Overrides {
		c.Overrides = append(c.Overrides, canonOverride{
			Key: o.Key, Limits: canonicalLimits(o.Limits), Unlimited: o.Unlimited, Blocked: o.Blocked,
		})
	}
	return c
}

// canonicalLimits returns limits' canonical form: the burst is the
// effective one (Rate when Burst is 0), so that 0 and Rate are one limit.
func canonicalLimits(limits []core.Limit) []canonLimit {
	if len(limits) == 0 {
		return nil
	}
	out := make([]canonLimit, len(limits))
	for i, l := range limits {
		burst := l.Burst
		if burst == 0 {
			burst = l.Rate
		}
		out[i] = canonLimit{Rate: l.Rate, PeriodNS: int64(l.Period / time.Nanosecond), Burst: burst, Name: l.Name,
			Zone: l.Zone, AnchorDay: l.AnchorDay}
		if l.Calendar != 0 {
			out[i].Calendar = l.Calendar.String()
		}
	}
	return out
}

// keyKindNames are the key kinds' names in the canonical form: the
// document's own.
var keyKindNames = map[KeyKind]string{
	KeyIP: "ip", KeyFrameworkIP: "framework_ip", KeyHeader: "header", KeyJWTClaim: "jwt_claim",
	KeyContext: "context", KeyRoute: "route", KeyMethod: "method",
}

// canonicalKeyPart returns k's canonical form; a kind no document has (a
// Document built in Go, which Validate refuses) is written as its number.
func canonicalKeyPart(k KeyPart) canonKeyPart {
	name, ok := keyKindNames[k.Kind]
	if !ok {
		name = strconv.Itoa(int(k.Kind))
	}
	return canonKeyPart{Kind: name, Name: k.Name}
}
