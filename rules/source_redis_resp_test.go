package rules

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// respBackend is the tests' RedisBackend: a small RESP2 client over plain
// TCP that talks to a real redis-server, so that package rules is tested
// against Redis without importing a Redis client (the bindings in
// store/redis and store/rueidis are tested in their modules). Eval starts at
// addr and follows MOVED, as a cluster client does; Subscribe subscribes on
// subAddr, which a test points at any node. Subscribe returns when its
// connection breaks, as the go-redis binding does.
type respBackend struct {
	addr, subAddr string
	// gate, when set, is received from before every subscription after the
	// first, so that a test decides when a lost subscription is renewed.
	gate chan struct{}
	subs atomic.Int64
}

func newRESP(addr string) *respBackend { return &respBackend{addr: addr, subAddr: addr} }

// redisError is an error reply.
type redisError string

func (e redisError) Error() string { return string(e) }

func (r *respBackend) Eval(ctx context.Context, sha1, source string, keys, args []string) ([]string, error) {
	cmd := append([]string{"EVALSHA", sha1, strconv.Itoa(len(keys))}, keys...)
	cmd = append(cmd, args...)
	reply, err := r.do(ctx, cmd...)
	if re := redisError(""); errors.As(err, &re) && strings.HasPrefix(string(re), "NOSCRIPT") {
		cmd[0], cmd[1] = "EVAL", source
		reply, err = r.do(ctx, cmd...)
	}
	if err != nil {
		return nil, err
	}
	vals, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("reply is %T, not an array", reply)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if out[i], ok = v.(string); !ok {
			return nil, fmt.Errorf("reply value %d is %T, not a string", i, v)
		}
	}
	return out, nil
}

// do sends one command, following MOVED to the node that serves its slot.
func (r *respBackend) do(ctx context.Context, args ...string) (any, error) {
	addr := r.addr
	for range 5 {
		reply, err := command(ctx, addr, args...)
		if re := redisError(""); errors.As(err, &re) && strings.HasPrefix(string(re), "MOVED ") {
			addr = strings.Fields(string(re))[2]
			continue
		}
		return reply, err
	}
	return nil, errors.New("too many redirections")
}

func (r *respBackend) Subscribe(ctx context.Context, channel string, subscribed func(), message func(string)) error {
	if r.subs.Add(1) > 1 && r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", r.subAddr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if err := writeCommand(conn, "SUBSCRIBE", channel); err != nil {
		return err
	}
	rd := bufio.NewReader(conn)
	for {
		reply, err := readReply(rd)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if vals, ok := reply.([]any); ok && len(vals) == 3 {
			switch vals[0] {
			case "subscribe":
				subscribed()
			case "message":
				payload, _ := vals[2].(string)
				message(payload)
			}
		}
	}
}

// command sends one command to addr over a fresh connection and returns the
// reply: a string, an int64, nil, or a []any of them; an error reply is a
// redisError.
func command(ctx context.Context, addr string, args ...string) (any, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := writeCommand(conn, args...); err != nil {
		return nil, err
	}
	reply, err := readReply(bufio.NewReader(conn))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return reply, err
}

func writeCommand(w io.Writer, args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func readReply(rd *bufio.Reader) (any, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, redisError(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return nil, fmt.Errorf("bad reply line %q", line)
	}
	switch {
	case n < 0:
		return nil, nil
	case line[0] == '$':
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case line[0] == '*':
		vals := make([]any, n)
		for i := range vals {
			if vals[i], err = readReply(rd); err != nil {
				return nil, err
			}
		}
		return vals, nil
	}
	return nil, fmt.Errorf("bad reply line %q", line)
}
