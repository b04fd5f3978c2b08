package servertest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func TestLockedBufferConcurrentWrites(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
			}
		})
	}
	wg.Wait()
	assert.Len(t, b.String(), 8*100*2)
}

// ServeHandler's Start builds the handler from the setup it is given and
// serves it on a loopback listener.
func TestServeHandler(t *testing.T) {
	setup := &flags.Setup{}
	var built *flags.Setup
	start := ServeHandler(func(s *flags.Setup) (http.HandlerFunc, error) {
		built = s
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") }, nil
	})
	url := start(t, setup)
	assert.Same(t, setup, built)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "served", string(body))
}

func TestSaveFileReplacesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	SaveFile(t, path, []byte("new"))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(raw))
	_, err = os.Stat(path + ".new")
	assert.ErrorIs(t, err, os.ErrNotExist, "the temporary file is renamed, not left")
}

// CopyRules reads the file from the folder above the test's (examples/,
// seen from examples/internal).
func TestCopyRules(t *testing.T) {
	path := CopyRules(t, "flags/doc.go")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "package flags")
}

// failures records what an assertion reports.
type failures struct{ messages []string }

func (f *failures) Errorf(format string, args ...any) {
	f.messages = append(f.messages, fmt.Sprintf(format, args...))
}

func TestAssertNoRateLimitHeaders(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		failed bool
	}{
		{"none", http.Header{"Content-Type": {"text/plain"}}, false},
		{"RateLimit-Policy", http.Header{"Ratelimit-Policy": {`"api";q=1;w=1`}}, true},
		{"X-RateLimit-Remaining", http.Header{"X-Ratelimit-Remaining": {"0"}}, true},
		{"Retry-After", http.Header{"Retry-After": {"1"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f failures
			AssertNoRateLimitHeaders(&f, Response{Header: tt.header}, tt.name)
			assert.Equal(t, tt.failed, len(f.messages) > 0, f.messages)
		})
	}
}
