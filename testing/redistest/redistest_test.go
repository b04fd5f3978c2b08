package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

func TestStartLocalRestartPause(t *testing.T) {
	s := StartLocal(t)
	must.False(t, s.External())
	must.Equal(t, "redis://"+s.Addr(), s.URL())
	reply, err := command(s.Addr(), "SET", "k", "v")
	must.NoError(t, err)
	must.Equal(t, "OK", reply)

	s.Restart(t)
	reply, err = command(s.Addr(), "PING")
	must.NoError(t, err)
	expect.Equal(t, "PONG", reply)
	_, err = command(s.Addr(), "GET", "k")
	expect.Error(t, err, "a restarted server starts empty (GET of a missing key is a nil bulk)")

	s.Pause(t)
	_, err = command(s.Addr(), "PING")
	must.Error(t, err, "a paused server answers nothing")
	s.Resume(t)
	reply, err = command(s.Addr(), "PING")
	must.NoError(t, err)
	expect.Equal(t, "PONG", reply)

	s.Stop(t)
	_, err = command(s.Addr(), "PING")
	expect.Error(t, err, "a stopped server refuses connections")
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
			expect.True(t, s.External())
			expect.Equal(t, tt.addr, s.Addr())
			expect.Equal(t, tt.url, s.URL())
		})
	}
}

func TestStartClusterHonoursEnv(t *testing.T) {
	t.Setenv("REDIS_CLUSTER_ADDRS", "127.0.0.1:7000, 127.0.0.1:7001,,127.0.0.1:7002")
	expect.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, StartCluster(t))
}

func TestStartCluster(t *testing.T) {
	t.Setenv("REDIS_CLUSTER_ADDRS", "")
	addrs := StartCluster(t)
	must.Len(t, addrs, 3)
	for _, a := range addrs {
		info, err := command(a, "CLUSTER", "INFO")
		must.NoError(t, err)
		expect.Contains(t, info, "cluster_state:ok")
		expect.Contains(t, info, "cluster_known_nodes:3")
	}
	// A key lands on exactly one master; the others redirect.
	var moved int
	for _, a := range addrs {
		if _, err := command(a, "SET", "{tag}k", "v"); err != nil {
			must.True(t, strings.HasPrefix(err.Error(), "MOVED"), err.Error())
			moved++
		}
	}
	expect.Equal(t, 2, moved)
}

func TestStartSentinel(t *testing.T) {
	master, addr := StartSentinel(t)
	reply, err := command(addr, "PING")
	must.NoError(t, err)
	must.Equal(t, "PONG", reply)
	must.Eventually(t, func() bool {
		info, err := command(addr, "INFO", "sentinel")
		return err == nil && strings.Contains(info, "name="+SentinelMaster+",status=ok,address="+master.Addr())
	}, 10*time.Second, 20*time.Millisecond)
}
