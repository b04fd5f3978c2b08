package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/stretchr/testify/require"
)

// TestSelectMatchesReference compares the selector with naiveSelect, which
// checks every policy by the letter of the rules, on random policy sets
// (some over 512 policies, some with over 8 methods or hosts) and random
// requests.
func TestSelectMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		n := 1 + rng.IntN(120)
		if round%50 == 0 {
			n = 513 + rng.IntN(200)
		}
		ps := randomPolicies(rng, n)
		s, err := newSelector(ps)
		require.NoError(t, err)
		for range 100 {
			r := randomRequest(rng)
			want := naiveSelect(ps, r)
			require.Equal(t, want, s.Select(r, nil), "round %d, request %s %s %v, route %q", round, r.Method(), r.Path(), r.HeaderValues("X-Plan"), matchedRoute(r))
		}
	}
}

// TestSelectSparseHostsMatchesReference covers the lists a value index keeps
// when its dense sets would be too large: 3,000 policies of their own host.
func TestSelectSparseHostsMatchesReference(t *testing.T) {
	const n = 3000
	ps := make([]Policy, n)
	for i := range ps {
		ps[i] = pol(fmt.Sprint("p", i), Match{Hosts: []string{fmt.Sprintf("h%d.example.com", i%1500)}})
		if i%7 == 0 {
			ps[i].Match.Hosts = nil
		}
	}
	s, err := newSelector(ps)
	require.NoError(t, err)
	require.Nil(t, s.hosts.dense, "the index should keep lists")
	for _, host := range []string{"h0.example.com", "H77.Example.com:80", "h1499.example.com.", "nope", ""} {
		r := req("GET", "/", "Host", host)
		require.Equal(t, naiveSelect(ps, r), s.Select(r, nil), host)
	}
}

// FuzzSelect selects on fuzzed requests with a fixed set of policies: no
// panic, and no index twice or out of order.
func FuzzSelect(f *testing.F) {
	ps := randomPolicies(rand.New(rand.NewPCG(7, 8)), 80)
	ps = append(ps, benchPolicies()...)
	for i := range ps {
		ps[i].Name = fmt.Sprint("p", i)
		ps[i].Replaces = nil
	}
	ps[0].Replaces = []string{"p1", "p2"}
	s, err := newSelector(ps)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("GET", "/api/v1/users/7", "api.example.com:443", "paid")
	f.Add("post", "//a/../b/%2e%2E/%zz", "[::1]:80", "")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, method, path, host, plan string) {
		r := req(method, path, "Host", host, "X-Plan", plan)
		got := s.Select(r, nil)
		for k := 1; k < len(got); k++ {
			if got[k] <= got[k-1] {
				t.Fatalf("Select returned %v: an index twice or out of order", got)
			}
		}
		if want := naiveSelect(ps, r); fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("Select returned %v, the reference %v", got, want)
		}
	})
}

// naiveSelect is the rule of docs/rules.md, checked policy by policy: a
// policy applies when its match holds and no policy that applies replaces it.
func naiveSelect(ps []Policy, r keyfuncs.Request) []int {
	memo := make([]int, len(ps)) // 0 unknown, 1 applies, 2 does not
	var applies func(i int) bool
	applies = func(i int) bool {
		if memo[i] == 0 {
			memo[i] = 2
			if naiveMatch(&ps[i].Match, r) && !replacedByApplying(ps, i, applies) {
				memo[i] = 1
			}
		}
		return memo[i] == 1
	}
	var out []int
	for i := range ps {
		if applies(i) {
			out = append(out, i)
		}
	}
	return out
}

// replacedByApplying reports whether a policy that applies replaces ps[i].
func replacedByApplying(ps []Policy, i int, applies func(int) bool) bool {
	for j := range ps {
		for _, name := range ps[j].Replaces {
			if name == ps[i].Name && applies(j) {
				return true
			}
		}
	}
	return false
}

// naiveMatch checks every field of m against r, one value after another.
func naiveMatch(m *Match, r keyfuncs.Request) bool {
	paths := []string{normalizePath(r.Path())}
	if dotted := referenceDotted(r.Path()); dotted != "" {
		paths = append(paths, dotted)
	}
	pathOK := len(m.Paths) == 0 && len(m.Prefixes) == 0
	route, routed := naiveRoute(matchedRoute(r))
	for _, s := range m.Paths {
		p, _ := parsePattern(s)
		pathOK = pathOK || routed && naiveSameRoute(&p, &route)
		for _, path := range paths {
			pathOK = pathOK || p.match(path)
		}
	}
	for _, pre := range m.Prefixes {
		for _, path := range paths {
			lpath, lpre := strings.ToLower(path), strings.ToLower(pre)
			pathOK = pathOK || lpath == lpre || strings.HasPrefix(lpath, strings.TrimSuffix(lpre, "/")+"/")
		}
	}
	methodOK := len(m.Methods) == 0
	for _, v := range m.Methods {
		v = strings.ToUpper(v)
		methodOK = methodOK || v == r.Method() || v == "GET" && r.Method() == "HEAD"
	}
	host := r.Header("Host")
	switch {
	case strings.HasPrefix(host, "[") && strings.Contains(host, "]"):
		host = host[1:strings.Index(host, "]")]
	case strings.Count(host, ":") == 1:
		host = host[:strings.Index(host, ":")]
	}
	host = strings.TrimSuffix(host, ".")
	hostOK := len(m.Hosts) == 0
	for _, v := range m.Hosts {
		hostOK = hostOK || strings.EqualFold(strings.TrimSuffix(strings.Trim(v, "[]"), "."), host)
	}
	for _, h := range m.Headers {
		vs := r.HeaderValues(h.Name)
		if len(vs) == 0 || !h.Present && vs[0] != h.Value {
			return false
		}
	}
	return pathOK && methodOK && hostOK
}

// matchedRoute returns the route r's view says its router matched, "" when
// it says none.
func matchedRoute(r keyfuncs.Request) string {
	if mr, ok := r.(keyfuncs.MatchedRouteRequest); ok {
		return mr.MatchedRoute()
	}
	return ""
}

// naiveRoute rewrites a framework's route (Echo's and Gin's ":id", "*" and
// "*name", net/http's "{id}", "{name...}" and "{$}") as a route pattern of
// the rules, each literal in normal form, and parses it; false for a route
// that is none (a wildcard inside a segment, an escape, no leading "/").
func naiveRoute(route string) (pattern, bool) {
	if !strings.HasPrefix(route, "/") {
		return pattern{}, false
	}
	const wild = `:*{}\`
	segs := strings.Split(route[1:], "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		name := strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}")
		switch {
		case strings.HasPrefix(seg, ":") && !strings.ContainsAny(seg[1:], wild):
			segs[i] = fmt.Sprintf("{p%d}", i)
		case (strings.HasPrefix(seg, "*") || strings.HasPrefix(seg, "+")) && last && !strings.ContainsAny(seg[1:], wild):
			segs[i] = fmt.Sprintf("{p%d...}", i)
		case seg == "{$}" && last:
			segs[i] = ""
		case len(seg) >= 2 && len(name) == len(seg)-2 && !strings.ContainsAny(name, wild) && name != "$":
			if strings.HasSuffix(name, "...") && !last {
				return pattern{}, false
			}
			segs[i] = fmt.Sprintf("{p%d%s}", i, name[len(strings.TrimSuffix(name, "...")):])
		case strings.ContainsAny(seg, wild):
			return pattern{}, false
		default:
			segs[i] = referenceSegment(seg)
		}
	}
	p, err := parsePattern("/" + strings.Join(segs, "/"))
	return p, err == nil
}

// naiveSameRoute reports whether two route patterns are one route: the
// same segments, literals equal without regard to case, parameters
// anywhere the other has one, and the same tail.
func naiveSameRoute(a, b *pattern) bool {
	if len(a.segments) != len(b.segments) || a.tail != b.tail {
		return false
	}
	for i := range a.segments {
		x, y := a.segments[i], b.segments[i]
		if x.kind != y.kind || x.kind == segLiteral && !strings.EqualFold(x.text, y.text) {
			return false
		}
	}
	return true
}

// randomRoute returns a route as a framework would name it: often one of
// the rules' patterns in Echo's, Gin's or net/http's syntax, its literals in
// random case, sometimes a route no pattern can be.
func randomRoute(rng *rand.Rand) string {
	if rng.IntN(5) == 0 {
		return []string{"", "a/b", "/a/b:c", "/x*", "/{$}", "/a/{$}", "/a/{p...}/b", "/*/a", "/:a/\\:b", "/a//b", "/./a", "/%61", "/A/%2f"}[rng.IntN(13)]
	}
	p := randomPattern(rng)
	var b strings.Builder
	for i, s := range p.segments {
		b.WriteByte('/')
		switch {
		case s.kind == segParam && rng.IntN(2) == 0:
			b.WriteString(":x" + fmt.Sprint(i))
		case s.kind == segParam:
			b.WriteString("{y" + fmt.Sprint(i) + "}")
		case rng.IntN(2) == 0:
			b.WriteString(strings.ToUpper(s.text))
		default:
			b.WriteString(s.text)
		}
	}
	if p.tail != tailNone {
		b.WriteString([]string{"/*", "/*rest", "/{rest...}", "/+"}[rng.IntN(4)])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// randomPolicies returns n policies with random matches over small
// alphabets (so that they overlap) and random acyclic replaces.
func randomPolicies(rng *rand.Rand, n int) []Policy {
	ps := make([]Policy, n)
	rank := rng.Perm(n) // a policy replaces only policies of higher rank
	manyValues := rng.IntN(4) == 0
	for i := range ps {
		ps[i].Name = fmt.Sprint("p", i)
	}
	for i := range ps {
		m := &ps[i].Match
		for range rng.IntN(3) {
			text := randomPattern(rng).text // a prefix's text is a pattern's too
			if checkPrefix(text) == nil && rng.IntN(2) == 0 {
				m.Prefixes = append(m.Prefixes, text)
			} else {
				m.Paths = append(m.Paths, text)
			}
		}
		m.Methods = pickSome(rng, []string{"GET", "POST", "DELETE", "get"}, manyValues, "M")
		m.Hosts = pickSome(rng, []string{"a.com", "B.com", "[::1]", "c.com."}, manyValues, "h.com")
		if rng.IntN(4) == 0 {
			m.Headers = append(m.Headers, []HeaderMatch{
				{Name: "X-Plan", Value: "paid"}, {Name: "x-plan", Present: true}, {Name: "X-Empty", Value: ""},
			}[rng.IntN(3)])
		}
		for range rng.IntN(3) {
			if j := rng.IntN(n); rank[j] > rank[i] {
				ps[i].Replaces = append(ps[i].Replaces, ps[j].Name)
			}
		}
	}
	return ps
}

// pickSome returns none or some of values (half of the time none); with
// many, up to 12 more values made of prefix and a number.
func pickSome(rng *rand.Rand, values []string, many bool, prefix string) []string {
	if rng.IntN(2) == 0 {
		return nil
	}
	var out []string
	for range 1 + rng.IntN(2) {
		out = append(out, values[rng.IntN(len(values))])
	}
	if many {
		for range rng.IntN(12) {
			out = append(out, fmt.Sprint(prefix, rng.IntN(12)))
		}
	}
	return out
}

// randomRequest returns a request over the alphabets of randomPolicies.
func randomRequest(rng *rand.Rand) keyfuncs.Request {
	method := []string{"GET", "POST", "DELETE", "get", "PUT", "M3", "M11"}[rng.IntN(7)]
	var path string
	if rng.IntN(2) == 0 {
		path = randomMatchingPath(rng, new(randomPattern(rng)))
	} else {
		path = randomRawPath(rng)
	}
	var kv []string
	if rng.IntN(4) > 0 {
		kv = append(kv, "Host", []string{"a.com", "A.COM:80", "b.com", "[::1]:443", "c.com", "c.com.", "h.com7", "x"}[rng.IntN(8)])
	}
	switch rng.IntN(4) {
	case 0:
		kv = append(kv, "X-Plan", "paid")
	case 1:
		kv = append(kv, "X-Plan", "", "X-Empty", "")
	case 2:
		kv = append(kv, "X-Plan", "free", "X-Plan", "paid")
	}
	r := req(method, path, kv...)
	if rng.IntN(2) == 0 {
		return routedView{r, randomRoute(rng)}
	}
	return r
}
