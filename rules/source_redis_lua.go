package rules

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
)

// The rules in Redis are one hash, <prefix>{rules}:doc, with the fields text
// (the document as pushed), version (its version, a positive decimal
// integer) and digest (its identity, "<version>:<Document.Digest>"), and one
// channel, <prefix>{rules}:announce, on which a push publishes the identity
// it stored. The digest field names its version so that a push by a
// ratewarden that wrote no digest (which leaves the field as it was) is seen
// for what it is: a digest of another version, ignored, rather than a
// tampered one. The scripts below are the only code that
// touches them; each replies with an array of strings whose first names the
// outcome, so that a key holding garbage is reported as such rather than as
// a Lua or WRONGTYPE error.

// luaScript is a script's source and the hex SHA1 EVALSHA takes.
type luaScript struct{ source, sha1 string }

func newLuaScript(name, body string) luaScript {
	src := "-- ratewarden rules " + name + "\n" + body
	sum := sha1.Sum([]byte(src))
	return luaScript{source: src, sha1: hex.EncodeToString(sum[:])}
}

// luaStored, shared by the scripts, defines stored(): the stored version,
// or nil and the reply for a key that holds no rules ({'none'}) or garbage.
// (HGET gives false for a missing field.)
const luaStored = `
local function stored()
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t == 'none' then return nil, {'none'} end
  if t ~= 'hash' then return nil, {'wrongtype', t} end
  local cur = redis.call('HGET', KEYS[1], 'version')
  if not cur or not string.match(cur, '^[1-9]%d*$') or #cur > 19 then
    return nil, {'badversion', cur or ''}
  end
  return cur
end
`

// pushScript stores ARGV[2] (the text) with version ARGV[1] and identity
// ARGV[4] ("<version>:<digest>") when the key is empty or holds an older
// version, and then publishes the identity on ARGV[3]; it replies {'ok',
// version}. The version stored with the digest stored (the same rules) is
// announced again, and changes nothing: {'same', version}. It refuses the
// version stored with another digest, {'conflict', version, stored
// identity}, and an older version, or the version stored without a digest
// of it, {'stale', stored version}. Versions are compared as the decimal
// strings they are (longer is larger, then lexically), exactly for every
// int64, which Lua's doubles are not.
var pushScript = newLuaScript("push", luaStored+`
local cur, why = stored()
if why and why[1] ~= 'none' then return why end
if cur and ARGV[1] == cur then
  local held = redis.call('HGET', KEYS[1], 'digest')
  if held == ARGV[4] then
    redis.call('PUBLISH', ARGV[3], ARGV[4])
    return {'same', cur}
  end
  if held and string.sub(held, 1, #cur + 1) == cur .. ':' then
    return {'conflict', cur, held}
  end
  return {'stale', cur}
end
if cur and (#ARGV[1] < #cur or (#ARGV[1] == #cur and ARGV[1] < cur)) then
  return {'stale', cur}
end
redis.call('HSET', KEYS[1], 'text', ARGV[2], 'version', ARGV[1], 'digest', ARGV[4])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {'ok', ARGV[1]}
`)

// readScript replies {'ok', version, digest} or, when ARGV[1] is '1', {'ok',
// version, digest, text}: one round trip that reads them, so that they
// belong together. The digest is the field as stored, ” when there is none.
var readScript = newLuaScript("read", luaStored+`
local cur, why = stored()
if why then return why end
local digest = redis.call('HGET', KEYS[1], 'digest') or ''
if ARGV[1] ~= '1' then return {'ok', cur, digest} end
local text = redis.call('HGET', KEYS[1], 'text')
if not text then return {'notext', cur} end
return {'ok', cur, digest, text}
`)

// stored is what Redis holds: a version, the digest field and, when it was
// asked for, the text.
type stored struct {
	version int64
	stamp   string
	text    []byte
}

// read reads the stored version and, withText, the text.
func (c *redisConfig) read(ctx context.Context, b RedisBackend, withText bool) (stored, error) {
	arg := "0"
	if withText {
		arg = "1"
	}
	reply, err := b.Eval(ctx, readScript.sha1, readScript.source, []string{c.docKey()}, []string{arg})
	if err != nil {
		return stored{}, fmt.Errorf("%w: read %s: %w", ErrRedisFailed, c.docKey(), err)
	}
	if err := c.outcome(reply); err != nil {
		return stored{}, err
	}
	v, err := c.version(reply[1])
	if err != nil {
		return stored{}, err
	}
	want := 3
	if withText {
		want = 4
	}
	if len(reply) != want {
		return stored{version: v}, c.unexpected(reply)
	}
	st := stored{version: v, stamp: reply[2]}
	if withText {
		st.text = []byte(reply[3])
	}
	return st, nil
}

// decodePush returns what a push's reply says: the version Redis holds, and
// why it refused the push.
func (c *redisConfig) decodePush(reply []string, pushed Identity) (int64, error) {
	switch {
	case len(reply) == 2 && reply[0] == "stale":
		held, err := c.version(reply[1])
		if err != nil {
			return 0, err
		}
		return held, fmt.Errorf("%w: version %d pushed, %s holds version %d: raise the document's version above it", ErrStaleRules, pushed.Version, c.docKey(), held)
	case len(reply) == 3 && reply[0] == "conflict":
		held, ok := parseStamp(reply[2])
		if !ok || reply[1] != strconv.FormatInt(pushed.Version, 10) {
			return 0, c.unexpected(reply)
		}
		return held.Version, fmt.Errorf("%w: %s pushed; %s holds %s: raise the document's version above %d",
			ErrVersionConflict, pushed, c.docKey(), held, held.Version)
	case len(reply) == 2 && reply[0] == "same" && reply[1] == strconv.FormatInt(pushed.Version, 10):
		return pushed.Version, nil
	}
	if err := c.outcome(reply); err != nil {
		return 0, err
	}
	if len(reply) != 2 || reply[1] != strconv.FormatInt(pushed.Version, 10) {
		return 0, c.unexpected(reply)
	}
	return pushed.Version, nil
}

// outcome returns the error a script's reply reports, or nil for 'ok' with
// a version.
func (c *redisConfig) outcome(reply []string) error {
	if len(reply) == 0 {
		return c.unexpected(reply)
	}
	key := c.docKey()
	switch {
	case reply[0] == "ok" && len(reply) >= 2:
		return nil
	case reply[0] == "none" && len(reply) == 1:
		return fmt.Errorf("%w: %s does not exist (push a document with: ratewarden rules push)", ErrNoRules, key)
	case reply[0] == "wrongtype" && len(reply) == 2:
		return fmt.Errorf("%w: %s holds a %s, not the hash a push writes", ErrRedisGarbage, key, shorten(reply[1]))
	case reply[0] == "badversion" && len(reply) == 2:
		return fmt.Errorf("%w: %s: the version %q is not a positive integer", ErrRedisGarbage, key, shorten(reply[1]))
	case reply[0] == "notext" && len(reply) == 2:
		return fmt.Errorf("%w: %s has a version (%s) but no text", ErrRedisGarbage, key, shorten(reply[1]))
	}
	return c.unexpected(reply)
}

// version reads a stored version, which the scripts checked to be decimal
// digits; a number beyond int64 is garbage too.
func (c *redisConfig) version(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%w: %s: the version %q is not a positive 64-bit integer", ErrRedisGarbage, c.docKey(), shorten(s))
	}
	return v, nil
}

// unexpected reports a reply no script sends: a binding that mangles replies.
func (c *redisConfig) unexpected(reply []string) error {
	head := reply
	if len(head) > 2 {
		head = head[:2]
	}
	return fmt.Errorf("%w: %s: unexpected script reply of %d values %q", ErrRedisFailed, c.docKey(), len(reply), head)
}
