package redistest

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// UnseenScript's scripts differ each call, carry their body and their SHA1,
// and are unknown to the server until an EVAL runs them.
func TestUnseenScript(t *testing.T) {
	sha, src := UnseenScript("return 1")
	otherSHA, otherSrc := UnseenScript("return 1")
	expect.NotEqual(t, src, otherSrc)
	expect.NotEqual(t, sha, otherSHA)
	expect.True(t, strings.HasSuffix(src, "\nreturn 1"), src)
	sum := sha1.Sum([]byte(src))
	expect.Equal(t, hex.EncodeToString(sum[:]), sha)

	addr := Start(t).Addr()
	_, err := command(addr, "EVALSHA", sha, "0")
	expect.ErrorContains(t, err, "NOSCRIPT")
	reply, err := command(addr, "EVAL", src, "0")
	must.NoError(t, err)
	expect.Equal(t, "1", reply)
	reply, err = command(addr, "EVALSHA", sha, "0")
	must.NoError(t, err)
	expect.Equal(t, "1", reply)
}
