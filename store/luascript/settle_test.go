package luascript

import (
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
)

// The debt variants read every rebase at the horizon, every window count up
// to Rate + D, and the arguments after the debt bound one place later: no
// text of the plain scripts' rebase is left.
func TestDebtScriptsReadTheHorizon(t *testing.T) {
	for _, a := range core.Algorithms() {
		if a == core.SlidingLog {
			expect.Nil(t, debtScripts[a])
			expect.Nil(t, chargeScripts[a])
			continue
		}
		for _, s := range []*Script{debtScripts[a], chargeScripts[a]} {
			src := s.Source
			expect.Equal(t, 1, strings.Count(src, "2 * nk + 2"), "%s: the debt bound alone at ARGV[2*nk+2]", s)
			expect.Contains(t, src, luaDebt)
			for _, old := range []string{"now + tau", "> tau then t", "local us = tau", "while top <= rate do"} {
				expect.NotContains(t, src, old, "%s", s)
			}
		}
		if a.OneWord() {
			expect.Equal(t, 4, strings.Count(debtScripts[a].Source, "local hz = tau + debt * iv"), "%s: each limit's horizon (the refund, one limit, and the two loops of several)", a)
			expect.Contains(t, chargeScripts[a].Source, "local tat, top = t, now + hz")
		} else {
			expect.Contains(t, debtScripts[a].Source, "while top <= rate + debt do")
		}
	}
	expect.Len(t, SettleScripts(), 10)
}
