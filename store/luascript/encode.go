package luascript

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// ErrReply reports a script reply that is not the seven integers the scripts
// return: a script of another version, or a proxy that altered the reply.
var ErrReply = errors.New("luascript: malformed reply")

// MaxTagLen bounds the hash tag's length: a namespace and key whose escaped
// form is longer are replaced by the hex SHA-256 of both, so a 10 KB API key
// costs Redis what a short one does.
const MaxTagLen = 128

// MaxPrefixLen bounds Config.Prefix.
const MaxPrefixLen = 256

// Config says how requests are encoded for the scripts. The zero Config is
// valid: no key prefix, the server's clock, no TTL floor.
type Config struct {
	// Prefix starts every key, e.g. "ratewarden:". It may not hold '{' or '}',
	// which would move the hash tag.
	Prefix string
	// CallerClock makes the scripts use TakeRequest.Now instead of the Redis
	// server's TIME.
	CallerClock bool
	// MinTTL is a floor on the time to live of every key the scripts write
	// (rounded up to whole milliseconds). Zero sets each key to expire exactly
	// when its state becomes equal to a fresh one; a floor keeps state alive when
	// the caller's clock runs slower than Redis's (a manual clock in tests).
	MinTTL time.Duration
}

// Validate reports why c cannot be used, with an error wrapping
// core.ErrInvalidOption, or nil.
func (c Config) Validate() error {
	switch {
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("%w: key prefix %q may not hold '{' or '}' (they would move the hash tag)", core.ErrInvalidOption, truncate(c.Prefix))
	case len(c.Prefix) > MaxPrefixLen:
		return fmt.Errorf("%w: key prefix longer than %d bytes", core.ErrInvalidOption, MaxPrefixLen)
	case c.MinTTL < 0:
		return fmt.Errorf("%w: negative minimum TTL %s", core.ErrInvalidOption, c.MinTTL)
	case c.MinTTL > core.MaxPeriod:
		return fmt.Errorf("%w: minimum TTL %s is longer than %s", core.ErrInvalidOption, c.MinTTL, core.MaxPeriod)
	}
	return nil
}

// Call is one script invocation: EVALSHA Script.SHA1 len(Keys) Keys... Args...
// (or EVAL Script.Source ... when the server answers NOSCRIPT).
type Call struct {
	// Script is the algorithm's script.
	Script *Script
	// Keys holds one key per limit, in the request's order. They share one hash
	// tag, so they live in one Redis Cluster slot.
	Keys []string
	// Args are the script's ARGV.
	Args []string
}

// Encode checks req as core.Algorithm.ApplyAll does (the same sentinel
// errors: core.ErrInvalidLimit, core.ErrInvalidAlgorithm, core.ErrInvalidCost,
// core.ErrClock) and returns the script call that decides it.
//
// Keys have the form
//
//	<prefix>{<namespace>:<key>}:<algorithm>:<rate>/<period µs>/<burst>
//
// with the specs of all limits joined by '+' and ":<index>" appended when the
// request has several limits, so limiters with different limit sets never share
// state. In the hash tag, '%', '{', '}' are escaped as %25, %7B, %7D (and ':'
// and '#' in the namespace as %3A, %23); a tag longer than MaxTagLen becomes
// '#' and the hex SHA-256 of the namespace and key.
func (c Config) Encode(req core.TakeRequest) (Call, error) {
	sc, nk, strs, err := c.AppendStrings(nil, req)
	if err != nil {
		return Call{}, err
	}
	return Call{Script: sc, Keys: strs[:nk:nk], Args: strs[nk:]}, nil
}

// AppendStrings is Encode appending the call's KEYS and then its ARGV to dst,
// for clients that take both as strings (rueidis): it returns the script, the
// number of keys, and dst extended. With a dst of room enough (a stack array
// of 16 holds any request of up to 4 limits) it allocates only the key.
func (c Config) AppendStrings(dst []string, req core.TakeRequest) (*Script, int, []string, error) {
	var buf [8]*encodedLimit
	now, encs, err := c.check(req, buf[:0])
	if err != nil {
		return nil, 0, dst, err
	}
	if n := len(dst) + len(encs) + 3 + 2*len(encs); cap(dst) < n {
		dst = append(make([]string, 0, n), dst...)
	}
	dst = c.appendKeys(dst, req, encs)
	now1 := serverTime
	if now >= 0 {
		now1 = strconv.FormatInt(now, 10)
	}
	dst = append(dst, now1, strconv.FormatInt(req.Cost, 10), strconv.FormatInt(ceilMillis(c.MinTTL), 10))
	for _, e := range encs {
		a := e.args(req.Algorithm)
		dst = append(dst, a[0], a[1])
	}
	return scripts[req.Algorithm], len(encs), dst, nil
}

// serverTime is the time argument that asks a script for the server's TIME.
const serverTime = "-1"

// check validates c and req as core would, and returns the time to send (-1
// for the server's) and the limits' encodings, appended to dst.
func (c Config) check(req core.TakeRequest, dst []*encodedLimit) (int64, []*encodedLimit, error) {
	if err := c.Validate(); err != nil {
		return 0, nil, err
	}
	now := int64(-1)
	if c.CallerClock {
		now = core.Micros(req.Now)
	}
	encs, err := checkRequest(req, now, c.CallerClock, dst)
	return now, encs, err
}

// Keys returns the keys that hold req's state, one per limit, as Encode names
// them: what a reset deletes. It returns an error for an invalid algorithm or
// limit, or an empty list of limits.
func (c Config) Keys(req core.TakeRequest) ([]string, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var buf [8]*encodedLimit
	encs, err := checkRequest(req, 0, false, buf[:0])
	if err != nil {
		return nil, err
	}
	return c.appendKeys(make([]string, 0, len(encs)), req, encs), nil
}

// Decode turns a script's reply into the decision for req, with Limit and
// Index naming the governing limit among req.Limits. It returns an error
// wrapping ErrReply for a reply that does not fit req.
//
// The meter and window scripts reply {allowed, now, states before the
// request...}; Decode runs core's algorithm on those states at that instant,
// which gives the Decision the script's test implies, and fails when core's
// verdict differs from the script's. The sliding log's script replies with
// the Decision itself: allowed, exceeds, governing index, remaining, and
// reset-after, retry-after and delay in µs.
func Decode(req core.TakeRequest, reply []int64) (core.Decision, error) {
	if req.Algorithm == core.SlidingLog {
		return decodeDecision(req, reply)
	}
	return decodeStates(req, reply)
}

// decisionReplyLen is the length of the sliding log's reply.
const decisionReplyLen = 7

func decodeDecision(req core.TakeRequest, reply []int64) (core.Decision, error) {
	if len(reply) != decisionReplyLen {
		return core.Decision{}, fmt.Errorf("%w: %d values, want %d", ErrReply, len(reply), decisionReplyLen)
	}
	idx := reply[2]
	switch {
	case reply[0] != 0 && reply[0] != 1, reply[1] != 0 && reply[1] != 1:
		return core.Decision{}, fmt.Errorf("%w: flags %d, %d", ErrReply, reply[0], reply[1])
	case idx < 0 || idx >= int64(len(req.Limits)):
		return core.Decision{}, fmt.Errorf("%w: limit index %d of %d", ErrReply, idx, len(req.Limits))
	case reply[4] < 0 || reply[5] < 0 || reply[6] < 0:
		return core.Decision{}, fmt.Errorf("%w: negative duration", ErrReply)
	}
	return core.Decision{
		Allowed:    reply[0] == 1,
		Exceeds:    reply[1] == 1,
		Limit:      req.Limits[idx],
		Index:      int(idx),
		Remaining:  reply[3],
		ResetAfter: time.Duration(reply[4]) * time.Microsecond,
		RetryAfter: time.Duration(reply[5]) * time.Microsecond,
		Delay:      time.Duration(reply[6]) * time.Microsecond,
	}, nil
}

func decodeStates(req core.TakeRequest, reply []int64) (core.Decision, error) {
	stride := 3 // T, N, P
	if req.Algorithm.OneWord() {
		stride = 1 // T
	}
	n := len(req.Limits)
	if len(reply) != 2+stride*n {
		return core.Decision{}, fmt.Errorf("%w: %d values, want %d", ErrReply, len(reply), 2+stride*n)
	}
	now := reply[1]
	switch {
	case reply[0] != 0 && reply[0] != 1:
		return core.Decision{}, fmt.Errorf("%w: flag %d", ErrReply, reply[0])
	case now < 0 || now > core.MaxTime:
		return core.Decision{}, fmt.Errorf("%w: time %d µs out of range", ErrReply, now)
	}
	var buf [8]core.State
	states := buf[:0]
	if n > len(buf) {
		states = make([]core.State, 0, n)
	}
	for _, x := range reply[2:] {
		if x < 0 {
			return core.Decision{}, fmt.Errorf("%w: negative state", ErrReply)
		}
	}
	for i := range n {
		s := core.State{T: reply[2+stride*i]}
		if stride == 3 {
			s.N, s.P = reply[3+stride*i], reply[4+stride*i]
		}
		states = append(states, s)
	}
	d, err := req.Algorithm.ApplyAll(states, req.Limits, req.Cost, now)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrReply, err)
	}
	if d.Allowed != (reply[0] == 1) {
		return core.Decision{}, fmt.Errorf("%w: the script's verdict (%d) is not core's", ErrReply, reply[0])
	}
	return d, nil
}

// checkRequest mirrors core's checks, in core's order, so a store reports what
// ApplyAll would, and appends the limits' encodings to dst. now is only checked
// in caller-clock mode.
func checkRequest(req core.TakeRequest, now int64, checkNow bool, dst []*encodedLimit) ([]*encodedLimit, error) {
	if len(req.Limits) == 0 {
		return nil, fmt.Errorf("%w: no limits", core.ErrInvalidLimit)
	}
	for _, l := range req.Limits {
		if err := req.Algorithm.Validate(); err != nil {
			return nil, err
		}
		if req.Cost < 0 {
			return nil, fmt.Errorf("%w: %d is negative", core.ErrInvalidCost, req.Cost)
		}
		if checkNow && (now < 0 || now > core.MaxTime) {
			return nil, fmt.Errorf("%w: %d µs since the epoch", core.ErrClock, now)
		}
		e, err := encodeLimit(l)
		if err != nil {
			return nil, err
		}
		dst = append(dst, e)
	}
	return dst, nil
}

func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// appendKeys appends req's keys, named from the limits' encodings, to dst;
// req has been checked.
func (c Config) appendKeys(dst []string, req core.TakeRequest, encs []*encodedLimit) []string {
	alg := req.Algorithm.String()
	n := len(c.Prefix) + len(req.Namespace) + len(req.Key) + len(alg) + 8
	for _, e := range encs {
		n += len(e.spec) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(c.Prefix)
	b.WriteByte('{')
	writeTag(&b, req.Namespace, req.Key)
	b.WriteString("}:")
	b.WriteString(alg)
	b.WriteByte(':')
	for i, e := range encs {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(e.spec)
	}
	base := b.String()
	if len(encs) == 1 {
		return append(dst, base)
	}
	for i := range encs {
		dst = append(dst, base+":"+strconv.Itoa(i))
	}
	return dst
}

// writeTag writes the hash tag's content for namespace ns and key.
func writeTag(b *strings.Builder, ns, key string) {
	n := escapedLen(ns, true) + 1 + escapedLen(key, false)
	if n > MaxTagLen {
		h := sha256.New()
		var lenbuf [binary.MaxVarintLen64]byte
		h.Write(lenbuf[:binary.PutUvarint(lenbuf[:], uint64(len(ns)))])
		h.Write([]byte(ns))
		h.Write([]byte(key))
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(h.Sum(nil)))
		return
	}
	writeEscaped(b, ns, true)
	b.WriteByte(':')
	writeEscaped(b, key, false)
}

func escapes(c byte, ns bool) bool {
	switch c {
	case '%', '{', '}':
		return true
	case ':', '#':
		return ns
	}
	return false
}

func escapedLen(s string, ns bool) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if escapes(s[i], ns) {
			n += 2
		}
	}
	return n
}

func writeEscaped(b *strings.Builder, s string, ns bool) {
	const hexdigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escapes(c, ns) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&15])
	}
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
