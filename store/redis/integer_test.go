package redisstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// testIntegerReplies: the binding reads the reply of a script whose
// IntegerReply is set, one integer, appending it after what dst holds,
// through the EVAL fallback and then EVALSHA, exactly up to 2^53; an array,
// a string or an error reply to such a script is an error.
func testIntegerReplies(t *testing.T, b luascript.Backend) {
	ctx := context.Background()
	r, ok := b.(luascript.IntegerReplier)
	require.True(t, ok, "the binding is an IntegerReplier")
	require.True(t, r.ReadsIntegerReplies())
	script := func(body string) *luascript.Script {
		sha, src := redistest.UnseenScript(body)
		return &luascript.Script{Source: src, SHA1: sha, IntegerReply: true}
	}
	sum := script("return ARGV[1] - ARGV[2] + #KEYS")
	for range 2 { // EVAL on NOSCRIPT, then EVALSHA
		got, err := b.Eval(ctx, sum, []string{"{redistest}:a"}, []string{"-5", "9007199254740986"}, []int64{42})
		require.NoError(t, err)
		assert.Equal(t, []int64{42, -(1<<53 - 2)}, got)
	}
	for name, src := range map[string]string{
		"an array":       "return {1}",
		"a string":       "return 'x'",
		"an error reply": "return redis.error_reply('redistest: boom')",
	} {
		_, err := b.Eval(ctx, script(src), []string{"{redistest}:a"}, nil, nil)
		assert.Error(t, err, name)
	}
}
