package luascript

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// errReply reports a script reply that does not fit the request: a script of
// another version, or a proxy that altered the reply. The Store wraps it with
// ErrRedis.
var errReply = errors.New("luascript: malformed reply")

// decode turns a script's reply into the decision for req, with Limit and
// Index naming the governing limit among req.Limits, or returns an error
// wrapping errReply.
//
// The meter and window scripts reply {allowed, now, states before the
// request...}; decode runs core's algorithm on those states at that instant,
// which gives the Decision the script's test implies, and fails when core's
// verdict differs from the script's. The sliding log's script replies with the
// Decision itself (see luaSlidingLog). The meters' scripts of one limit reply
// with one integer, which decodeGap reads.
func decode(req core.TakeRequest, reply []int64) (core.Decision, error) {
	if req.Algorithm == core.SlidingLog {
		return decodeDecision(req, reply)
	}
	return decodeStates(req, reply)
}

// decisionReplyLen is the length of the sliding log's reply.
const decisionReplyLen = 6

func decodeDecision(req core.TakeRequest, reply []int64) (core.Decision, error) {
	if len(reply) != decisionReplyLen {
		return core.Decision{}, fmt.Errorf("%w: %d values, want %d", errReply, len(reply), decisionReplyLen)
	}
	idx := reply[2]
	switch {
	case reply[0] != 0 && reply[0] != 1, reply[1] != 0 && reply[1] != 1:
		return core.Decision{}, fmt.Errorf("%w: flags %d, %d", errReply, reply[0], reply[1])
	case idx < 0 || idx >= int64(len(req.Limits)):
		return core.Decision{}, fmt.Errorf("%w: limit index %d of %d", errReply, idx, len(req.Limits))
	case reply[4] < 0 || reply[5] < 0:
		return core.Decision{}, fmt.Errorf("%w: negative duration", errReply)
	}
	return core.Decision{
		Allowed:    reply[0] == 1,
		Exceeds:    reply[1] == 1,
		Limit:      req.Limits[idx],
		Index:      int(idx),
		Remaining:  reply[3],
		ResetAfter: time.Duration(reply[4]) * time.Microsecond,
		RetryAfter: time.Duration(reply[5]) * time.Microsecond,
	}, nil
}

func decodeStates(req core.TakeRequest, reply []int64) (core.Decision, error) {
	var buf [maxStackLimits]core.State
	now, states, err := readFlagged(req, reply, buf[:0])
	if err != nil {
		return core.Decision{}, err
	}
	return applyStates(req, states, now, reply[0] == 1)
}

// readFlagged is readStates of a reply whose first integer is the script's
// verdict, 0 or 1.
func readFlagged(req core.TakeRequest, reply []int64, buf []core.State) (int64, []core.State, error) {
	if len(reply) > 0 && reply[0] != 0 && reply[0] != 1 {
		return 0, nil, fmt.Errorf("%w: flag %d", errReply, reply[0])
	}
	return readStates(req, reply, buf)
}

// applyStates runs core's algorithm on the states a script read, at now, and
// fails when core's verdict is not the script's (allowed). A refund replies
// as the peek that follows it.
func applyStates(req core.TakeRequest, states []core.State, now int64, allowed bool) (core.Decision, error) {
	d, err := req.Algorithm.ApplyAll(states, req.Limits, max(0, req.Cost), now)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", errReply, err)
	}
	if d.Allowed != allowed {
		return core.Decision{}, fmt.Errorf("%w: the script's verdict (allowed %t) is not core's", errReply, allowed)
	}
	return d, nil
}

// decodeGap decodes the one integer a script of one limit replies
// (Script.IntegerReply): x when the request was admitted, -1 - x when denied.
// For a meter (luaMeterOneInt) x is the time its state held beyond the
// script's now, 0 for none: a meter's decision depends on its state only
// through that gap, so core decides it on a state of T = x at the instant 0.
// For a window (luaWindowOneInt) x = q * period + the time since the window
// holding now started, q being that window's count (fixed) or its count and
// the previous one's (sliding: cur * 2 * rate + prev); core decides it at
// that time into its second window (period + elapsed), on a state of that
// window. A figure out of its range is an error wrapping errReply.
func decodeGap(req core.TakeRequest, reply []int64) (core.Decision, error) {
	if len(reply) != 1 || len(req.Limits) != 1 {
		return core.Decision{}, fmt.Errorf("%w: %d values for %d limits, want 1 for 1", errReply, len(reply), len(req.Limits))
	}
	x, allowed := reply[0], true
	if x < 0 {
		x, allowed = -1-x, false
	}
	if x > core.MaxTime {
		return core.Decision{}, fmt.Errorf("%w: %d out of range", errReply, reply[0])
	}
	if req.Algorithm.OneWord() {
		states := [1]core.State{{T: x}}
		return applyStates(req, states[:], 0, allowed)
	}
	l := req.Limits[0]
	period, b := l.Period.Microseconds(), 2*l.Rate
	if period <= 0 || b <= 0 {
		return core.Decision{}, fmt.Errorf("%w: limit %v", errReply, l)
	}
	q, elapsed := x/period, x%period
	state := core.State{T: period, N: q}
	if req.Algorithm == core.SlidingWindow {
		state.N, state.P = q/b, q%b
	}
	if state.N >= b {
		return core.Decision{}, fmt.Errorf("%w: count %d above the scripts' cut", errReply, state.N)
	}
	states := [1]core.State{state}
	return applyStates(req, states[:], period+elapsed, allowed)
}

// packsWindow reports whether a window limit's decision fits the one integer
// below core.MaxTime its script of one limit replies (luaWindowOneInt): each
// count is below b = 2 * rate, so x stays below b * period for the fixed
// window and b * b * period for the sliding window.
func packsWindow(alg core.Algorithm, f figures) bool {
	b := uint64(2 * f.rate)
	hi, x := bits.Mul64(b, uint64(f.period))
	if alg == core.SlidingWindow && hi == 0 {
		hi, x = bits.Mul64(b, x)
	}
	return hi == 0 && x <= uint64(core.MaxTime)
}

// checkResetReply checks the reset script's reply: the number of keys deleted,
// at most the number sent.
func checkResetReply(reply []int64, keys int) error {
	if len(reply) != 1 || reply[0] < 0 || reply[0] > int64(keys) {
		return fmt.Errorf("%w: reset replied %v for %d keys", errReply, reply, keys)
	}
	return nil
}

// readStates reads the states a script replied after its first figure (a
// flag or a grant) and Redis's time, {x, now, states...}: T for a one-word
// algorithm, T, N and P for the others, one per limit of req, appended to
// buf. A reply of another length, a time out of range or a negative state is
// an error wrapping errReply.
func readStates(req core.TakeRequest, reply []int64, buf []core.State) (int64, []core.State, error) {
	stride := 3 // T, N, P
	if req.Algorithm.OneWord() {
		stride = 1 // T
	}
	n := len(req.Limits)
	if len(reply) != 2+stride*n {
		return 0, nil, fmt.Errorf("%w: %d values, want %d", errReply, len(reply), 2+stride*n)
	}
	now := reply[1]
	if now < 0 || now > core.MaxTime {
		return 0, nil, fmt.Errorf("%w: time %d µs out of range", errReply, now)
	}
	states := buf
	for i := range n {
		s := core.State{T: reply[2+stride*i]}
		if stride == 3 {
			s.N, s.P = reply[3+stride*i], reply[4+stride*i]
		}
		if s.T < 0 || s.N < 0 || s.P < 0 {
			return 0, nil, fmt.Errorf("%w: negative state", errReply)
		}
		states = append(states, s)
	}
	return now, states, nil
}
