package luascript

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// The penalty box (core.WithBlockFor). A request with a BlockFor runs its
// algorithm's "+block" script: the algorithm's own script with the block
// decided around it, in the same call (one round trip, atomic). The block of
// a key is one more Redis key, the request's state key (the first one's name
// without its index, for several limits) followed by ":b", in the same hash
// tag, holding the block's end (µs, on the clock that decides) with a TTL to
// that end. The reset script deletes it with the state keys.
//
// The call is the algorithm's, with the block key last in KEYS, now and the
// TTL floor always sent (serverTime for Redis's clock), and two more
// arguments last in ARGV: the block's duration (µs) and the block a denial of
// this request starts (µs; 0 for a peek, a refund or a cost above a limit's
// capacity: core.TakeRequest.BlockOnDenial). The script
//
//   - reads the block's end, and cuts it to now plus the duration when it lies
//     further ahead (a clock that stepped back, a shortened duration), or
//     deletes it once passed (a clock that steps back later never brings
//     an ended block back, as in core);
//   - while it runs, decides the request as a peek (a spend spends nothing;
//     a refund still gives back);
//   - otherwise decides the request, and on a denial that starts a block
//     writes the block's end;
//
// and replies with the algorithm's reply followed by three integers: 0 (no
// block), 1 (refused by a running block) or 2 (a block started by this
// denial); the block's end (0 for none); and now.

// luaBlockHead replaces luaNow in a +block script: the same arguments, one
// key fewer, and the block read and decided.
const luaBlockHead = `
local nk = #KEYS - 1
local cost, now, minttl, opt = ARGV[1] + 0, -1, 0, 2 * nk + 2
if cost < 0 then opt = opt + 1 end
now, minttl = ARGV[opt] + 0, ARGV[opt + 1] + 0
if now < 0 then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local bkey, blockfor, trip = KEYS[nk + 1], ARGV[#ARGV - 1] + 0, ARGV[#ARGV] + 0
local bend = tonumber(redis.call('GET', bkey) or '0')
local bstate = 0
if bend - now > blockfor then
  bend = now + blockfor
  local us = blockfor` + luaTTL + `  redis.call('SET', bkey, string.format('%d', bend), 'PX', ms)
end
if bend > now then
  bstate = 1
  if cost > 0 then cost = 0 end
elseif bend > 0 then
  redis.call('DEL', bkey)
  bend = 0
end
local reply = (function()
`

// luaBlockTail ends a +block script: a denial that starts a block writes it,
// and the reply gains the block's state, end and now.
const luaBlockTail = `
end)()
if reply.err then return reply end
if bstate == 0 and trip > 0 and reply[1] == 0 then
  bstate, bend = 2, now + trip
  local us = trip` + luaTTL + `  redis.call('SET', bkey, string.format('%d', bend), 'PX', ms)
end
local k = #reply
reply[k + 1], reply[k + 2], reply[k + 3] = bstate, bend, now
return reply
`

// blockScripts holds each algorithm's +block script, indexed by the
// algorithm; nil for a script that does not start with luaNow, which Take
// then refuses (a test checks there is none).
var blockScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range core.Algorithms() {
		body, ok := strings.CutPrefix(scripts[a].Source, "-- ratewarden "+a.String()+"\n"+luaNow)
		if ok {
			s[a] = newScript(a.String()+"+block", luaBlockHead+body+luaBlockTail)
		}
	}
	return s
}()

// BlockScripts returns the algorithms' penalty-box scripts, in the order of
// core.Algorithms, which a Store sends for requests with a BlockFor. A
// binding may SCRIPT LOAD them ahead of use; it need not, as a Backend falls
// back to EVAL.
func BlockScripts() []*Script {
	out := make([]*Script, 0, len(core.Algorithms()))
	for _, a := range core.Algorithms() {
		if blockScripts[a] != nil {
			out = append(out, blockScripts[a])
		}
	}
	return out
}

// blockKey is the name of the key holding the block of a request whose
// state keys are keys.
func blockKey(keys []string) string {
	if len(keys) == 1 {
		return keys[0] + ":b"
	}
	k := keys[0]
	return k[:strings.LastIndexByte(k, ':')+1] + "b"
}

// BlockKey returns the Redis key that holds the penalty box of req's key
// under its algorithm and limits (core.WithBlockFor), as Take names it:
// the block's end in µs since the epoch, with a TTL to that end; the key is
// absent when no block runs. It is for an operator looking into Redis, or a
// test. An invalid algorithm or limit returns core's error.
func (s *Store) BlockKey(req core.TakeRequest) (string, error) {
	keys, _, err := s.keys(req)
	if err != nil {
		return "", err
	}
	return blockKey(keys), nil
}

// appendBlockCall appends to dst the call of a +block script for req: the
// algorithm's call (appendCall) with the block key after the state keys, now
// and the TTL floor always, and the block's two figures last. It returns the
// call, whose first len(encs)+1 entries are the keys.
func (c *config) appendBlockCall(dst []string, req core.TakeRequest, now int64, encs []*encodedLimit) []string {
	call := c.appendCall(dst, req, now, encs)
	n := len(encs)
	keys, args := call[:n:n], call[n:]
	out := make([]string, 0, len(call)+5)
	out = append(append(out, keys...), blockKey(keys))
	out = append(out, args...)
	if !c.sendsNow(req, now) {
		out = append(out, serverTime, c.minTTLArg)
	}
	out = append(out, strconv.FormatInt(req.BlockFor.Microseconds(), 10), strconv.FormatInt(req.BlockOnDenial(), 10))
	return out
}

// checkBlock checks req's BlockFor (core's error) and that its algorithm has
// a +block script.
func checkBlock(req core.TakeRequest) error {
	if err := core.ValidateBlockFor(req.BlockFor); err != nil {
		return err
	}
	if blockScripts[req.Algorithm] == nil {
		return fmt.Errorf("%w: no penalty-box script for %s", core.ErrUnsupported, req.Algorithm)
	}
	return nil
}

// decodeBlock decodes a +block script's reply for req: the algorithm's
// reply, decided as a peek when a running block refused a spend, then the
// block applied to the decision.
func decodeBlock(req core.TakeRequest, reply []int64) (core.Decision, error) {
	d, _, err := decodeBlockLeft(req, reply)
	return d, err
}

// decodeBlockLeft is decodeBlock that also returns the time the key's block
// has left (0 when none runs), for the cache of denials.
func decodeBlockLeft(req core.TakeRequest, reply []int64) (core.Decision, time.Duration, error) {
	if len(reply) < 3 {
		return core.Decision{}, 0, fmt.Errorf("%w: %d values, want the block's 3 after the algorithm's", errReply, len(reply))
	}
	tail := reply[len(reply)-3:]
	state, end, now := tail[0], tail[1], tail[2]
	switch {
	case state < 0 || state > 2:
		return core.Decision{}, 0, fmt.Errorf("%w: block state %d", errReply, state)
	case now < 0 || now > core.MaxTime:
		return core.Decision{}, 0, fmt.Errorf("%w: time %d µs out of range", errReply, now)
	case state == 0 && end != 0, state != 0 && (end <= now || end-now > req.BlockFor.Microseconds()):
		return core.Decision{}, 0, fmt.Errorf("%w: block end %d at %d", errReply, end, now)
	}
	asked := req
	if state == 1 && asked.Cost > 0 {
		asked.Cost = 0 // refused by the block: the script decided a peek
	}
	d, err := decode(asked, reply[:len(reply)-3])
	if err != nil {
		return core.Decision{}, 0, err
	}
	if state == 2 && d.Allowed {
		return core.Decision{}, 0, fmt.Errorf("%w: a block started on an admission", errReply)
	}
	switch state {
	case 1:
		d.ApplyBlock(end, now, false, limitWait(req, reply[:len(reply)-3], now))
	case 2:
		d.ApplyBlock(end, now, true, d.RetryAfter)
	}
	if state == 0 {
		return d, 0, nil
	}
	return d, time.Duration(end-now) * time.Microsecond, nil
}

// limitWait is core's LimitWait on the states a block script replied (the
// key's states before the request it refused as a peek): how long the
// limits alone would make the request wait. The sliding log replies no
// states: 0, as core's LimitWait says for it.
func limitWait(req core.TakeRequest, reply []int64, now int64) time.Duration {
	if req.Algorithm == core.SlidingLog {
		return 0
	}
	var buf [maxStackLimits]core.State
	_, states, err := readStates(req, reply, buf[:0])
	if err != nil {
		return 0 // decode read the same reply without an error
	}
	return req.LimitWait(states, now)
}
