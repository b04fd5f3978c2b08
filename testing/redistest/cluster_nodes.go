package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clusterNode is one line of CLUSTER NODES: a node as another node sees it.
type clusterNode struct {
	id       string
	addr     string // host:port, without the bus port
	flags    []string
	masterID string // "-" for a master
	slots    [][2]int
}

func (n clusterNode) master() bool { return n.has("master") }

func (n clusterNode) failed() bool { return n.has("fail") || n.has("fail?") }

func (n clusterNode) has(flag string) bool { return slices.Contains(n.flags, flag) }

// serves reports whether the node holds slot (a failed master still lists
// its slots until its replica takes them over).
func (n clusterNode) serves(slot int) bool {
	for _, r := range n.slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// nodesOf returns the cluster as the node at addr sees it (CLUSTER NODES).
func nodesOf(addr string) ([]clusterNode, error) {
	text, err := command(addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var nodes []clusterNode
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := clusterNode{id: f[0], flags: strings.Split(f[2], ","), masterID: f[3]}
		n.addr, _, _ = strings.Cut(f[1], "@")
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // a slot being migrated or imported
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("%s: slots %q: %w", addr, s, err)
			}
			n.slots = append(n.slots, [2]int{a, b})
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// hasRole reports why the node at addr does not report role (ROLE's first
// element: "master" or "slave").
func hasRole(addr, role string) error {
	reply, err := query(addr, "ROLE")
	if err != nil {
		return err
	}
	if r, ok := reply.([]any); !ok || len(r) == 0 || r[0] != role {
		return fmt.Errorf("%s: ROLE is %v, want %s", addr, reply, role)
	}
	return nil
}

// replicaOf reports why the node at addr is not a replica of master with its
// link up (ROLE: slave, host, port, "connected", offset).
func replicaOf(addr, master string) error {
	reply, err := query(addr, "ROLE")
	if err != nil {
		return err
	}
	r, ok := reply.([]any)
	if !ok || len(r) < 4 || r[0] != "slave" {
		return fmt.Errorf("%s: ROLE is %v, want a replica of %s", addr, reply, master)
	}
	host, _ := r[1].(string)
	port, _ := r[2].(int64)
	if got := net.JoinHostPort(host, strconv.FormatInt(port, 10)); got != master || r[3] != "connected" {
		return fmt.Errorf("%s: a replica of %s, %v; want of %s, connected", addr, got, r[3], master)
	}
	return nil
}

// query sends one command over a fresh connection and returns its reply: a
// string (a status or a bulk string), an int64, nil, or a []any of these.
func query(addr string, args ...string) (any, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(conn))
}

// readReply reads one RESP2 reply, arrays included.
func readReply(rd *bufio.Reader) (any, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("redistest: empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$', '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, fmt.Errorf("redistest: bad length %q", line)
		}
		if n < 0 {
			return nil, nil
		}
		if line[0] == '$' {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(rd, buf); err != nil {
				return nil, err
			}
			return string(buf[:n]), nil
		}
		elems := make([]any, n)
		for i := range elems {
			if elems[i], err = readReply(rd); err != nil {
				return nil, err
			}
		}
		return elems, nil
	}
	return nil, fmt.Errorf("redistest: unexpected reply %q", line)
}
