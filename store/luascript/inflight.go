package luascript

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

var (
	_ core.InFlightStore = (*Store)(nil)
	_ core.SlotPeeker    = (*Store)(nil)
)

// inflightScript fills a script's placeholders: NOWn reads now from ARGV[n],
// EXPIREn sets the TTL with the floor in ARGV[n].
func inflightScript(name, body string) *Script {
	r := strings.NewReplacer(
		"NOW4", strings.ReplaceAll(luaInFlightNow, "ARGV[NOW]", "ARGV[4]"),
		"NOW2", strings.ReplaceAll(luaInFlightNow, "ARGV[NOW]", "ARGV[2]"),
		"EXPIRE5", strings.ReplaceAll(luaInFlightExpire, "ARGV[MINTTL]", "ARGV[5]"),
		"EXPIRE3", strings.ReplaceAll(luaInFlightExpire, "ARGV[MINTTL]", "ARGV[3]"),
	)
	return newScript(name, r.Replace(body))
}

var (
	acquireScript = inflightScript("inflight-acquire", luaAcquire)
	renewScript   = inflightScript("inflight-renew", luaRenew)
	releaseScript = newScript("inflight-release", luaRelease)
	heldScript    = newScript("inflight-held", luaHeld)
)

// InFlightScripts returns the scripts of the in-flight limits (acquire,
// renew, release, count), for a binding that loads scripts ahead of use.
func InFlightScripts() []*Script {
	return []*Script{acquireScript, renewScript, releaseScript, heldScript}
}

// leaseIDPrefix and leaseCount name leases: a random prefix per process and
// a counter, so that no two instances sharing a Redis name two leases alike.
var (
	leaseIDPrefix = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		return hex.EncodeToString(b[:]) + "-"
	}()
	leaseCount atomic.Uint64
)

// InFlightKey returns the Redis key that holds the in-flight slots of key in
// namespace ns (see the package doc's layout).
func (s *Store) InFlightKey(ns, key string) string {
	var b strings.Builder
	b.Grow(len(s.cfg.prefix) + len(ns) + len(key) + 6)
	b.WriteString(s.cfg.prefix)
	b.WriteByte('{')
	writeTag(&b, ns, key)
	b.WriteString("}:c")
	return b.String()
}

// scriptNow is the now argument: the caller's µs in caller-clock mode, else
// -1 (the server's TIME).
func (s *Store) scriptNow(now time.Time) string {
	if s.cfg.callerClock {
		return strconv.FormatInt(core.Micros(now), 10)
	}
	return "-1"
}

// Acquire takes one of req.Key's slots in one script call: it drops the
// leases whose deadline passed (on Redis's TIME, or the caller's clock with
// WithCallerClock), counts the rest and adds a lease when fewer than
// req.InFlight.Slots are held. The lease's Deadline is on the caller's clock
// (req.Now plus the lease), whichever clock the script decided on.
func (s *Store) Acquire(ctx context.Context, req core.LeaseRequest) (core.LeaseDecision, error) {
	if err := req.Check(); err != nil {
		return core.LeaseDecision{}, err
	}
	if err := ctx.Err(); err != nil {
		return core.LeaseDecision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	f := req.InFlight
	key := s.InFlightKey(req.Namespace, req.Key)
	id := leaseIDPrefix + strconv.FormatUint(leaseCount.Add(1), 36)
	args := []string{strconv.FormatInt(f.Slots, 10), strconv.FormatInt(f.Lease.Microseconds(), 10), id, s.scriptNow(req.Now), s.cfg.minTTLArg}
	var buf [4]int64
	reply, err := s.backend.Eval(ctx, acquireScript, []string{key}, args, buf[:0])
	if err == nil && len(reply) != 4 {
		err = fmt.Errorf("in-flight acquire replied %d integers, want 4", len(reply))
	}
	if err != nil {
		return core.LeaseDecision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	held, at, now := reply[1], reply[2], reply[3]
	if reply[0] == 0 {
		return core.Refused(f, held, time.Duration(at-now)*time.Microsecond), nil
	}
	lease := core.Lease{Key: key, ID: id, Deadline: req.Now.Add(time.Duration(at-now) * time.Microsecond), Duration: f.Lease}
	return core.LeaseDecision{Allowed: true, Lease: lease, InFlight: f, Held: held}, nil
}

// Renew renews leases with one script call per key and lease length (the
// leases of one key share a hash slot), moving each held lease's deadline to
// now plus its Duration on the script's clock (Deadline, on the caller's:
// now plus Duration) and setting expired for the others.
func (s *Store) Renew(ctx context.Context, now time.Time, leases []core.Lease, expired []bool) error {
	if len(expired) != len(leases) {
		return fmt.Errorf("%w: %d leases, %d results", core.ErrInvalidOption, len(leases), len(expired))
	}
	order := make([]int, len(leases))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := strings.Compare(leases[a].Key, leases[b].Key); c != 0 {
			return c
		}
		return int(leases[a].Duration - leases[b].Duration)
	})
	for start := 0; start < len(order); {
		first := &leases[order[start]]
		end := start + 1
		for end < len(order) && leases[order[end]].Key == first.Key && leases[order[end]].Duration == first.Duration {
			end++
		}
		if err := s.renewGroup(ctx, now, leases, expired, order[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// renewGroup renews the leases at idx, which share a key and a duration.
func (s *Store) renewGroup(ctx context.Context, now time.Time, leases []core.Lease, expired []bool, idx []int) error {
	l := leases[idx[0]]
	if l.Key == "" || l.Duration <= 0 {
		return fmt.Errorf("%w: not a Redis store's lease", core.ErrInvalidOption)
	}
	args := make([]string, 0, 3+len(idx))
	args = append(args, strconv.FormatInt(l.Duration.Microseconds(), 10), s.scriptNow(now), s.cfg.minTTLArg)
	for _, i := range idx {
		args = append(args, leases[i].ID)
	}
	reply, err := s.backend.Eval(ctx, renewScript, []string{l.Key}, args, make([]int64, 0, 1+len(idx)))
	if err == nil && len(reply) != 1+len(idx) {
		err = fmt.Errorf("in-flight renew replied %d integers, want %d", len(reply), 1+len(idx))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	for j, i := range idx {
		expired[i] = reply[1+j] == 0
		if !expired[i] {
			leases[i].Deadline = now.Add(leases[i].Duration)
		}
	}
	return nil
}

// Release removes lease from its key's slots in one script call; a lease
// that expired or was released already changes nothing.
func (s *Store) Release(ctx context.Context, lease core.Lease) error {
	if lease.Key == "" || lease.ID == "" {
		return fmt.Errorf("%w: not a Redis store's lease", core.ErrInvalidOption)
	}
	var buf [1]int64
	if _, err := s.backend.Eval(ctx, releaseScript, []string{lease.Key}, []string{lease.ID}, buf[:0]); err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	return nil
}

// PeekSlots returns the number of in-flight slots of req.Key whose deadline
// has not passed (on Redis's TIME unless WithCallerClock, then at req.Now),
// in one script call that changes nothing: what the operator's tool
// reports.
func (s *Store) PeekSlots(ctx context.Context, req core.LeaseRequest) (int64, error) {
	if len(req.Namespace) > 256 {
		return 0, fmt.Errorf("%w: namespace longer than 256 bytes", core.ErrInvalidOption)
	}
	reply, err := s.backend.Eval(ctx, heldScript, []string{s.InFlightKey(req.Namespace, req.Key)}, []string{s.scriptNow(req.Now)}, nil)
	if err == nil && len(reply) != 1 {
		err = fmt.Errorf("in-flight count replied %d integers, want 1", len(reply))
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	return reply[0], nil
}
