package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

func TestProblemString(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"line, column and path", Problem{Pos: Pos{12, 14}, Path: "policies[1].limits[0]", Message: "bad"}, "12:14: policies[1].limits[0]: bad"},
		{"line only", Problem{Pos: Pos{Line: 3}, Message: "not valid YAML"}, "3: not valid YAML"},
		{"no position", Problem{Path: "version", Message: "too old"}, "version: too old"},
		{"nothing but a message", Problem{Message: "no document"}, "no document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.p.String())
		})
	}
}

func TestProblemsError(t *testing.T) {
	ps := &Problems{Source: "rules.yaml", List: []Problem{
		{Pos: Pos{2, 10}, Path: "version", Message: "version 0: a document's version is 1 or more"},
		{Pos: Pos{Line: 5}, Message: "not valid YAML: oops"},
		{Path: "policies", Message: "no policies"},
	}}
	assert.Equal(t, "rules.yaml:2:10: version: version 0: a document's version is 1 or more\n"+
		"rules.yaml:5: not valid YAML: oops\n"+
		"rules.yaml: policies: no policies", ps.Error())

	ps.Source = ""
	assert.Equal(t, "2:10: version: version 0: a document's version is 1 or more\n5: not valid YAML: oops\npolicies: no policies", ps.Error())

	ps.Omitted = 3
	assert.True(t, strings.HasSuffix(ps.Error(), "\nand 3 more problems"), ps.Error())

	assert.Equal(t, ErrInvalidRules.Error(), (&Problems{}).Error(), "an empty list still says what it is")
}

// A *Problems wraps ErrInvalidRules and the errors behind its problems, so
// callers can ask whether a limit or an algorithm is at fault.
func TestProblemsUnwrap(t *testing.T) {
	_, err := Parse([]byte(one("{name: a, limits: [1/x], algorithm: lru}")), "rules.yaml")
	require.ErrorIs(t, err, ErrInvalidRules)
	require.ErrorIs(t, err, core.ErrInvalidLimit)
	require.ErrorIs(t, err, core.ErrInvalidAlgorithm)
	require.NotErrorIs(t, err, core.ErrInvalidCost)

	var ps *Problems
	require.ErrorAs(t, fmt.Errorf("loading: %w", err), &ps, "a wrapped *Problems is found")
	require.Len(t, ps.List, 2)
	assert.ErrorIs(t, ps.List[0].Err, core.ErrInvalidLimit)
	assert.ErrorIs(t, ps.List[1].Err, core.ErrInvalidAlgorithm)

	_, err = Parse([]byte(one("{name: 'a b', limits: [1/s]}")), "rules.yaml")
	require.ErrorIs(t, err, ErrInvalidRules)
	require.NotErrorIs(t, err, core.ErrInvalidLimit, "only the errors behind the problems")
}

// Messages quote the document, cut short: a hostile document cannot make
// its problems huge.
func TestProblemMessagesStayShort(t *testing.T) {
	long := strings.Repeat("é", 5000) // two bytes each: the cut never splits one
	_, err := Parse([]byte(head+"  - name: a\n    limits: [1/s]\n    match: {paths: ['"+long+"']}\n    "+long[:1000]+": 1\n"), "rules.yaml")
	var ps *Problems
	require.ErrorAs(t, err, &ps)
	require.Len(t, ps.List, 2)
	for _, p := range ps.List {
		assert.LessOrEqual(t, len(p.Message), maxMessage+3)
		assert.True(t, strings.ToValidUTF8(p.Message, "?") == p.Message, "a cut message is valid UTF-8")
	}
}

func TestFindingsCount(t *testing.T) {
	var f findings
	for i := 0; i < MaxProblems+2; i++ {
		f.add(Pos{Line: i + 1}, nil, nil, "problem %d", i)
	}
	require.True(t, f.full())
	f.count()
	ps := f.problems("s")
	assert.Len(t, ps.List, MaxProblems)
	assert.Equal(t, 3, ps.Omitted)
	assert.False(t, errors.Is(ps, core.ErrInvalidLimit))
}
