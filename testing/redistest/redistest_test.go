package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartLocalRestartPause(t *testing.T) {
	s := StartLocal(t)
	require.False(t, s.External())
	require.Equal(t, "redis://"+s.Addr(), s.URL())
	reply, err := command(s.Addr(), "SET", "k", "v")
	require.NoError(t, err)
	require.Equal(t, "OK", reply)

	s.Restart(t)
	reply, err = command(s.Addr(), "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)
	_, err = command(s.Addr(), "GET", "k")
	assert.Error(t, err, "a restarted server starts empty (GET of a missing key is a nil bulk)")

	s.Pause(t)
	_, err = command(s.Addr(), "PING")
	require.Error(t, err, "a paused server answers nothing")
	s.Resume(t)
	reply, err = command(s.Addr(), "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)

	s.Stop(t)
	_, err = command(s.Addr(), "PING")
	assert.Error(t, err, "a stopped server refuses connections")
}

func TestStartHonoursRedisURL(t *testing.T) {
	tests := []struct {
		url, addr string
	}{
		{"redis://127.0.0.1:7000/0", "127.0.0.1:7000"},
		{"redis://:secret@localhost", "localhost:6379"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Setenv("REDIS_URL", tt.url)
			s := Start(t)
			assert.True(t, s.External())
			assert.Equal(t, tt.addr, s.Addr())
			assert.Equal(t, tt.url, s.URL())
		})
	}
}

func TestStartClusterHonoursEnv(t *testing.T) {
	t.Setenv("REDIS_CLUSTER_ADDRS", "127.0.0.1:7000, 127.0.0.1:7001,,127.0.0.1:7002")
	assert.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, StartCluster(t))
}

func TestStartCluster(t *testing.T) {
	t.Setenv("REDIS_CLUSTER_ADDRS", "")
	addrs := StartCluster(t)
	require.Len(t, addrs, 3)
	for _, a := range addrs {
		info, err := command(a, "CLUSTER", "INFO")
		require.NoError(t, err)
		assert.Contains(t, info, "cluster_state:ok")
		assert.Contains(t, info, "cluster_known_nodes:3")
	}
	// A key lands on exactly one master; the others redirect.
	var moved int
	for _, a := range addrs {
		if _, err := command(a, "SET", "{tag}k", "v"); err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "MOVED"), err.Error())
			moved++
		}
	}
	assert.Equal(t, 2, moved)
}

func TestStartSentinel(t *testing.T) {
	master, addr := StartSentinel(t)
	reply, err := command(addr, "PING")
	require.NoError(t, err)
	require.Equal(t, "PONG", reply)
	require.Eventually(t, func() bool {
		info, err := command(addr, "INFO", "sentinel")
		return err == nil && strings.Contains(info, "name="+SentinelMaster+",status=ok,address="+master.Addr())
	}, 10*time.Second, 20*time.Millisecond)
}
