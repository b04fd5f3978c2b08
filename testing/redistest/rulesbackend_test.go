package redistest

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// UnseenScript's scripts differ each call, carry their body and their SHA1,
// and are unknown to the server until an EVAL runs them.
func TestUnseenScript(t *testing.T) {
	sha, src := UnseenScript("return 1")
	otherSHA, otherSrc := UnseenScript("return 1")
	assert.NotEqual(t, src, otherSrc)
	assert.NotEqual(t, sha, otherSHA)
	assert.True(t, strings.HasSuffix(src, "\nreturn 1"), src)
	sum := sha1.Sum([]byte(src))
	assert.Equal(t, hex.EncodeToString(sum[:]), sha)

	addr := Start(t).Addr()
	_, err := command(addr, "EVALSHA", sha, "0")
	assert.ErrorContains(t, err, "NOSCRIPT")
	reply, err := command(addr, "EVAL", src, "0")
	require.NoError(t, err)
	assert.Equal(t, "1", reply)
	reply, err = command(addr, "EVALSHA", sha, "0")
	require.NoError(t, err)
	assert.Equal(t, "1", reply)
}
