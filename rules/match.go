package rules

import (
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Matcher finds which policies of a document apply to a request, as a Set
// does before its policies decide: every policy whose match holds, less
// those removed by the replaces of a policy that applies (docs/rules.md,
// "Which policies apply"). The path is matched in its normal form ("//",
// "." and ".." resolved, unreserved characters decoded) and, when it has dot
// segments, with them kept as segments too (Echo, Gin and Fiber route
// "/users/.." to "/users/:id"), taken as the client
// sent it when the request view implements keyfuncs.EscapedPathRequest (every
// adapter's does), else from Path(); the host from keyfuncs.HostRequest, else
// the Host header, without the port and case-insensitively. When the view
// tells the route the framework's router matched (keyfuncs.MatchedRouteRequest:
// Echo's and Gin's adapters), the policies whose route pattern is that
// route, whatever the names of its parameters, apply too: a route pattern
// governs every path the router sends to its handler.
//
// Matching costs one walk of the path's segments over a trie of every
// pattern and a few operations on sets of policies: no regular expression,
// and no allocation for a path already in normal form (for documents of up
// to 512 policies; larger ones borrow scratch space from a pool). A Matcher
// is read-only once built and safe for concurrent use.
type Matcher struct {
	sel *selector
}

// NewMatcher builds the Matcher of doc's policies. It returns an error
// wrapping core.ErrInvalidOption for a nil document, and one wrapping
// ErrInvalidRules for a document that Parse would refuse in what matching
// needs: a malformed route pattern or prefix, an empty method, host or
// header name, two policies of one name, a replaces naming an unknown
// policy, or replaces that form a cycle.
func NewMatcher(doc *Document) (*Matcher, error) {
	if doc == nil {
		return nil, fmt.Errorf("%w: nil document", core.ErrInvalidOption)
	}
	sel, err := newSelector(doc.Policies)
	if err != nil {
		return nil, err
	}
	return &Matcher{sel: sel}, nil
}

// Match appends to dst the indexes, in the document's Policies, of the
// policies that apply to r, in document order, and returns the extended
// slice (pass a reused buffer, dst[:0], to allocate nothing).
func (m *Matcher) Match(r keyfuncs.Request, dst []int) []int {
	return m.sel.Select(r, dst)
}

// stackWords is the size, in words of 64 policies, of the sets Select keeps
// on the stack.
const stackWords = 8

// selector is a document's policies indexed for matching: a trie of the
// path conditions, an index per method and per host, the header conditions,
// and the replacers in the order that settles every removal in one pass.
type selector struct {
	words     int         // of a set of every policy
	pathless  bitset      // the policies without a path condition
	paths     *trieNode   // every path condition; nil when none
	routes    routeIndex  // every route pattern, by key; nil when none
	methods   *valueIndex // nil when no policy has a method condition
	hosts     *valueIndex // nil when no policy has a host condition
	headers   []headerCheck
	replacers []replacer // replacers before the policies they replace
	scratch   sync.Pool  // of *[]uint64 of 2*words, when over stackWords
}

// headerCheck is the header conditions of one policy, names canonical.
type headerCheck struct {
	policy int32
	conds  []HeaderMatch
}

// replacer is a policy with a replaces list, by index.
type replacer struct {
	policy  int32
	removes []int32
}

// newSelector indexes policies. It returns an error wrapping
// ErrInvalidRules for what keeps them from being matched (see NewMatcher).
func newSelector(policies []Policy) (*selector, error) {
	words := (len(policies) + 63) / 64
	s := &selector{words: words, pathless: make(bitset, words)}
	methods := make([][]string, len(policies))
	hosts := make([][]string, len(policies))
	var anyMethod, anyHost bool
	for i := range policies {
		p := &policies[i]
		if err := s.addPolicy(p, int32(i), methods, hosts); err != nil {
			return nil, fmt.Errorf("%w: policy %q: %w", ErrInvalidRules, keyfuncs.Bounded(p.Name, 64), err)
		}
		anyMethod = anyMethod || len(methods[i]) > 0
		anyHost = anyHost || len(hosts[i]) > 0
	}
	if anyMethod {
		s.methods = newValueIndex(methods, words, false)
	}
	if anyHost {
		s.hosts = newValueIndex(hosts, words, true)
	}
	if s.paths != nil {
		s.paths.seal()
	}
	var err error
	if s.replacers, err = replacersInOrder(policies); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRules, err)
	}
	if words > stackWords {
		s.scratch.New = func() any {
			b := make([]uint64, 2*words)
			return &b
		}
	}
	return s, nil
}

// addPolicy indexes the match of p, the policy of index i: its path
// conditions in the trie, its methods and hosts (upper-, lower-cased) into
// methods[i] and hosts[i], its header conditions.
func (s *selector) addPolicy(p *Policy, i int32, methods, hosts [][]string) error {
	m := &p.Match
	if err := s.addPaths(m, i); err != nil {
		return err
	}
	for _, v := range m.Methods {
		if v == "" {
			return fmt.Errorf("an empty method")
		}
		methods[i] = append(methods[i], strings.ToUpper(v))
	}
	if slices.Contains(methods[i], http.MethodGet) && !slices.Contains(methods[i], http.MethodHead) {
		methods[i] = append(methods[i], http.MethodHead) // every router answers HEAD with the GET handler
	}
	for _, v := range m.Hosts {
		h := hostOnly(strings.ToLower(v))
		if h == "" {
			return fmt.Errorf("host %q names no host", v)
		}
		hosts[i] = append(hosts[i], h)
	}
	if len(m.Headers) == 0 {
		return nil
	}
	conds := make([]HeaderMatch, len(m.Headers))
	for k, h := range m.Headers {
		if h.Name == "" {
			return fmt.Errorf("headers[%d] has an empty name", k)
		}
		conds[k] = h
		conds[k].Name = textproto.CanonicalMIMEHeaderKey(h.Name)
	}
	s.headers = append(s.headers, headerCheck{policy: i, conds: conds})
	return nil
}

// addPaths puts the route patterns and prefixes of m into the trie under
// policy i, or i among the pathless policies when m has none.
func (s *selector) addPaths(m *Match, i int32) error {
	if len(m.Paths) == 0 && len(m.Prefixes) == 0 {
		s.pathless.add(i)
		return nil
	}
	if s.paths == nil {
		s.paths = &trieNode{}
	}
	for k, text := range m.Paths {
		p, err := parsePattern(text)
		if err != nil {
			return fmt.Errorf("paths[%d]: %w", k, err)
		}
		s.paths.insert(&p, i)
		if s.routes == nil {
			s.routes = routeIndex{}
		}
		s.routes.add(&p, i)
	}
	for k, text := range m.Prefixes {
		p, err := parsePrefix(text)
		if err != nil {
			return fmt.Errorf("prefixes[%d]: %w", k, err)
		}
		s.paths.insert(&p, i)
	}
	return nil
}

// Select appends to dst, in document order, the indexes of the policies
// that apply to r: each whose match holds, less those a policy that applies
// replaces.
func (s *selector) Select(r keyfuncs.Request, dst []int) []int {
	if s.words > stackWords {
		buf := s.scratch.Get().(*[]uint64)
		dst = s.selectInto(r, dst, (*buf)[:s.words], (*buf)[s.words:])
		s.scratch.Put(buf)
		return dst
	}
	var buf [2 * stackWords]uint64
	return s.selectInto(r, dst, buf[:s.words], buf[stackWords:stackWords+s.words])
}

// selectInto is Select with its scratch sets: set, where the answer is
// built, and tmp, of the same size.
func (s *selector) selectInto(r keyfuncs.Request, dst []int, set, tmp bitset) []int {
	copy(set, s.pathless)
	if s.paths != nil {
		normal, dotted := pathForms(requestPath(r))
		s.paths.walk(normal, 1, set)
		if dotted != "" {
			s.paths.walk(dotted, 1, set)
		}
	}
	if s.routes != nil {
		s.routes.addMatched(r, set)
	}
	if s.methods != nil {
		s.methods.filter(set, tmp, r.Method())
	}
	var peek httplimit.HeaderPeeker
	if s.hosts != nil || len(s.headers) > 0 {
		peek, _ = r.(httplimit.HeaderPeeker)
	}
	if s.hosts != nil {
		s.hosts.filter(set, tmp, requestHost(r, peek))
	}
	for i := range s.headers {
		h := &s.headers[i]
		if set.has(h.policy) && !h.holds(r, peek) {
			set.remove(h.policy)
		}
	}
	for _, rp := range s.replacers {
		if set.has(rp.policy) { // settled: every policy that could remove it came before
			for _, j := range rp.removes {
				set.remove(j)
			}
		}
	}
	return set.appendIndexes(dst)
}

// holds reports whether every header condition holds for r. A header is
// present when the request has it, even with an empty value (HeaderValues
// is asked only when the first value is empty, since it copies in some
// adapters); equals compares its first value exactly, and needs it present.
func (h *headerCheck) holds(r keyfuncs.Request, peek httplimit.HeaderPeeker) bool {
	for i := range h.conds {
		c := &h.conds[i]
		var v string
		if peek != nil {
			v = peek.PeekHeader(c.Name)
		} else {
			v = r.Header(c.Name)
		}
		switch {
		case !c.Present && v != c.Value:
			return false
		case v == "" && len(r.HeaderValues(c.Name)) == 0:
			return false // absent
		}
	}
	return true
}
