package rules

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// bitset is a set of policy indexes, one bit each.
type bitset []uint64

func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) add(i int32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) remove(i int32)   { b[i>>6] &^= 1 << (i & 63) }

// addAll adds every index of is.
func (b bitset) addAll(is []int32) {
	for _, i := range is {
		b[i>>6] |= 1 << (i & 63)
	}
}

// and keeps only the indexes o has too.
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// appendIndexes appends the indexes in b to dst, in increasing order.
func (b bitset) appendIndexes(dst []int) []int {
	for w, word := range b {
		for word != 0 {
			dst = append(dst, w<<6|bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
	return dst
}

// manyChildren is the number of literal children above which a trie node
// finds them through a map rather than by comparing each.
const manyChildren = 8

// trieNode is a node of the trie of every path condition of a document: the
// route patterns and prefixes, each a path of literal and parameter edges
// from the root, ending in the node that lists the policy under the
// pattern's tail. A request walks it once, segment by segment, following at
// each node the literal edge of its segment and the parameter edge; since
// it is a tree, the walk visits a node at most once, whatever the patterns.
type trieNode struct {
	children []trieEdge           // literal edges, when few
	byText   map[string]*trieNode // literal edges, when many
	param    *trieNode            // the {name} edge: any non-empty segment
	leaf     bool                 // no edge at all: the walk ends here

	// The policies of the patterns that end here: with tailNone (exact),
	// tailRest (rest) and tailAny (any).
	exact, rest, any []int32
}

// trieEdge is a literal edge: the segment it takes, and where it leads.
type trieEdge struct {
	text string
	node *trieNode
}

// insert adds pattern p of policy i.
func (n *trieNode) insert(p *pattern, i int32) {
	for _, s := range p.segments {
		if s.kind == segParam {
			if n.param == nil {
				n.param = &trieNode{}
			}
			n = n.param
			continue
		}
		text := lowerASCII(s.text)
		next := n.literal(text)
		if next == nil {
			next = &trieNode{}
			n.children = append(n.children, trieEdge{text: text, node: next})
		}
		n = next
	}
	switch p.tail {
	case tailNone:
		n.exact = appendOnce(n.exact, i)
	case tailRest:
		n.rest = appendOnce(n.rest, i)
	default:
		n.any = appendOnce(n.any, i)
	}
}

// appendOnce appends i unless it is already the last index (a policy's
// patterns are inserted together).
func appendOnce(is []int32, i int32) []int32 {
	if len(is) > 0 && is[len(is)-1] == i {
		return is
	}
	return append(is, i)
}

// seal readies the trie for walks: maps for nodes with many children, and
// leaf marks.
func (n *trieNode) seal() {
	if len(n.children) > manyChildren {
		n.byText = make(map[string]*trieNode, len(n.children))
		for _, e := range n.children {
			n.byText[e.text] = e.node
		}
		n.children = nil
	}
	n.leaf = len(n.children) == 0 && n.byText == nil && n.param == nil
	for _, e := range n.children {
		e.node.seal()
	}
	for _, c := range n.byText {
		c.seal()
	}
	if n.param != nil {
		n.param.seal()
	}
}

// literal returns the node the literal edge seg leads to, or nil, comparing
// without regard to ASCII case (the edges' texts are lower case).
func (n *trieNode) literal(seg string) *trieNode {
	if n.byText != nil {
		if !hasUpperASCII(seg) {
			return n.byText[seg]
		}
		var buf [128]byte
		if len(seg) <= len(buf) {
			return n.byText[string(appendLowerASCII(buf[:0], seg))] // the lookup does not allocate
		}
		return n.byText[lowerASCII(seg)]
	}
	for i := range n.children {
		if equalFoldASCII(n.children[i].text, seg) {
			return n.children[i].node
		}
	}
	return nil
}

// walk adds to set the policies of every pattern that matches the normal
// path p, from node n, which the segments before pos led to (pos > len(p)
// once no segment is left).
func (n *trieNode) walk(p string, pos int, set bitset) {
	if pos > len(p) {
		set.addAll(n.exact)
		set.addAll(n.any)
		return
	}
	if pos == len(p) { // all that is left is a trailing "/", which a pattern need not have
		set.addAll(n.exact)
	}
	set.addAll(n.rest)
	set.addAll(n.any)
	if n.leaf {
		return
	}
	end := nextSegment(p, pos)
	seg := p[pos:end]
	if c := n.literal(seg); c != nil {
		c.walk(p, end+1, set)
	}
	if n.param != nil && seg != "" {
		n.param.walk(p, end+1, set)
	}
}

// denseWords bounds the memory of a valueIndex's dense sets (in words of 64
// policies): beyond it, the index keeps lists and pays a little per request.
const denseWords = 1 << 15

// valueIndex finds the policies a request's value (its method, its host)
// lets through: those that list it, and those with no condition on it.
type valueIndex struct {
	values  []string       // the distinct values listed, in first-seen order
	byValue map[string]int // value (its fold key for hosts) -> position, when many
	fold    bool           // compare case-insensitively (hosts)
	without bitset         // the policies that list no value
	dense   []bitset       // per value: the policies it lets through, when small enough
	lists   [][]int32      // per value: the policies that list it, otherwise
}

// newValueIndex indexes lists, one list per policy (nil for a policy with no
// condition); words is the size of a set of every policy.
func newValueIndex(lists [][]string, words int, fold bool) *valueIndex {
	vi := &valueIndex{fold: fold, without: make(bitset, words)}
	for i, l := range lists {
		if len(l) == 0 {
			vi.without.add(int32(i))
			continue
		}
		for _, v := range l {
			k := vi.find(v)
			if k < 0 {
				k = len(vi.values)
				vi.values = append(vi.values, v)
				vi.lists = append(vi.lists, nil)
			}
			vi.lists[k] = appendOnce(vi.lists[k], int32(i))
		}
	}
	if len(vi.values) > manyChildren {
		vi.byValue = make(map[string]int, len(vi.values))
		for k, v := range vi.values {
			vi.byValue[vi.key(v)] = k
		}
	}
	if len(vi.values)*words <= denseWords {
		vi.dense = make([]bitset, len(vi.values))
		for k, l := range vi.lists {
			vi.dense[k] = append(bitset(nil), vi.without...)
			vi.dense[k].addAll(l)
		}
		vi.lists = nil
	}
	return vi
}

// key is v's key in byValue: v itself, or for hosts its fold key.
func (vi *valueIndex) key(v string) string {
	if !vi.fold {
		return v
	}
	return string(appendFoldKey(nil, v))
}

// find returns the position of v among the values, or -1, comparing by
// scanning them (building the index, or when they are few).
func (vi *valueIndex) find(v string) int {
	for k, have := range vi.values {
		if have == v || vi.fold && hostsEqual(have, v) {
			return k
		}
	}
	return -1
}

// lookup returns the position of the request's value v, or -1.
func (vi *valueIndex) lookup(v string) int {
	if vi.byValue == nil {
		return vi.find(v)
	}
	if !vi.fold {
		if k, ok := vi.byValue[v]; ok {
			return k
		}
		return -1
	}
	var buf [256]byte
	if len(v) > len(buf) {
		return vi.find(v) // longer than any DNS name: compare one by one
	}
	// A fold key is never longer than its string: no rune folds to a longer one.
	if k, ok := vi.byValue[string(appendFoldKey(buf[:0], v))]; ok {
		return k
	}
	return -1
}

// filter removes from set the policies the value v does not let through;
// tmp is scratch space of the same size.
func (vi *valueIndex) filter(set, tmp bitset, v string) {
	k := vi.lookup(v)
	switch {
	case k < 0:
		set.and(vi.without)
	case vi.dense != nil:
		set.and(vi.dense[k])
	default:
		copy(tmp, vi.without)
		tmp.addAll(vi.lists[k])
		set.and(tmp)
	}
}

// appendFoldKey appends the key under which hostsEqual strings are one:
// each rune replaced by the smallest rune of its case-folding orbit ('a' and
// 'A' both by 'A'). A byte that is not UTF-8 is kept as it is.
func appendFoldKey(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		u, size := foldUnit(s, i)
		i += size
		if u < 0 {
			dst = append(dst, byte(-u-1))
		} else {
			dst = utf8.AppendRune(dst, u)
		}
	}
	return dst
}

// hostsEqual reports whether a and b are equal under case folding, as
// strings.EqualFold does for UTF-8, with bytes that are not UTF-8 compared
// exactly (EqualFold takes any two for one).
func hostsEqual(a, b string) bool {
	if !strings.EqualFold(a, b) {
		return false
	}
	if utf8.ValidString(a) && utf8.ValidString(b) {
		return true
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		u, n := foldUnit(a, i)
		v, m := foldUnit(b, j)
		if u != v {
			return false
		}
		i, j = i+n, j+m
	}
	return i == len(a) && j == len(b)
}

// foldUnit returns the fold unit of the rune that starts at s[i], and its
// size: the smallest rune of its case-folding orbit, or -1-b for a byte b
// that starts no UTF-8 rune.
func foldUnit(s string, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		return rune(c), 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return -1 - rune(c), 1
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least, size
}
