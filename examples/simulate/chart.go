package main

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// blurbs say in a few words what each row of the chart shows.
var blurbs = map[core.Algorithm]string{
	core.TokenBucket:   "burst, then the rate",
	core.LeakyBucket:   "queued, passed on at a steady pace",
	core.FixedWindow:   "Rate per aligned window",
	core.SlidingLog:    "exact: Rate in any window",
	core.SlidingWindow: "estimate of the sliding log",
	core.GCRA:          "same decisions as the token bucket",
}

var colors = map[core.Algorithm]string{
	core.TokenBucket:   "#1f77b4",
	core.LeakyBucket:   "#17becf",
	core.FixedWindow:   "#d62728",
	core.SlidingLog:    "#2ca02c",
	core.SlidingWindow: "#9467bd",
	core.GCRA:          "#ff7f0e",
}

// Chart geometry, in SVG user units.
const (
	chartW   = 980
	leftW    = 230 // row labels
	rightW   = 150 // per-row figures
	plotW    = chartW - leftW - rightW
	topH     = 74
	rowH     = 88
	barAreaH = 54
	bottomH  = 70
)

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// chart draws, for each algorithm, a row of bars: how many requests were passed
// on in each tenth of a period during the flood scenario, with the window
// boundaries dashed, and on the right the most passed on in any one period.
func chart(out io.Writer, lim core.Limit, all []series) error {
	w := bufio.NewWriter(out)
	g := newChartGeom(lim, len(all))
	counts, ymax := binCounts(g, all)
	writeChartHeader(w, g)
	for i, s := range all {
		writeChartRow(w, g, i, s, counts[i], ymax)
	}
	writeTimeAxis(w, g)
	fmt.Fprintln(w, `</svg>`)
	return w.Flush()
}

// chartGeom is what every part of the chart is drawn from: the limit, the
// flood, the width of a bar in time and the extent of the plot.
type chartGeom struct {
	lim        core.Limit
	plan       floodPlan
	bin        time.Duration
	nbins      int
	height     int
	plotTop    float64
	plotBottom float64
}

// newChartGeom lays out a chart of rows rows for the flood at lim.
func newChartGeom(lim core.Limit, rows int) chartGeom {
	plan := planFor(lim)
	bin := lim.Period / 10
	return chartGeom{
		lim:        lim,
		plan:       plan,
		bin:        bin,
		nbins:      int(plan.End / bin),
		height:     topH + rowH*rows + bottomH,
		plotTop:    float64(topH),
		plotBottom: float64(topH + rowH*rows),
	}
}

// x is where instant d of the flood falls on the plot.
func (g chartGeom) x(d time.Duration) float64 {
	return leftW + float64(plotW)*float64(d)/float64(g.plan.End)
}

// binCounts counts each series' passed requests per bar, and returns the
// tallest bar, at least the rate, for the common scale.
func binCounts(g chartGeom, all []series) ([][]int, int) {
	counts := make([][]int, len(all))
	ymax := int(g.lim.Rate)
	for i, s := range all {
		counts[i] = make([]int, g.nbins)
		for _, t := range s.Passed {
			if b := int(t / g.bin); b < g.nbins {
				counts[i][b]++
				ymax = max(ymax, counts[i][b])
			}
		}
	}
	return counts, ymax
}

// writeChartHeader opens the SVG and writes the background, the title, the
// caption and the window boundaries across every row.
func writeChartHeader(w io.Writer, g chartGeom) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n", chartW, g.height, chartW, g.height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, g.height)
	fmt.Fprintf(w, `<text x="20" y="30" font-size="20" font-weight="bold">%s</text>`+"\n",
		esc(fmt.Sprintf("The six algorithms at a limit of %s under the same flood", g.lim)))
	fmt.Fprintf(w, `<text x="20" y="54" font-size="14" fill="#444">%s</text>`+"\n",
		esc(fmt.Sprintf("A client is silent until %s, then sends a request every %s; denied requests are dropped. Bars: requests passed on per %s.", fmtDur(g.plan.Start), fmtDur(g.plan.Every), fmtDur(g.bin))))
	for t := g.lim.Period; t <= g.plan.End; t += g.lim.Period {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 4"/>`+"\n", g.x(t), g.plotTop, g.x(t), g.plotBottom)
	}
}

// writeChartRow draws row i: the algorithm's name and blurb, its bars, the
// most it passed on in any period and, when there is one, its tightest burst.
func writeChartRow(w io.Writer, g chartGeom, i int, s series, counts []int, ymax int) {
	top := float64(topH + rowH*i)
	base := top + 24 + barAreaH
	if i%2 == 1 {
		fmt.Fprintf(w, `<rect x="0" y="%.1f" width="%d" height="%d" fill="#000" fill-opacity="0.035"/>`+"\n", top, chartW, rowH)
	}
	fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="16" font-weight="bold" fill="%s">%s</text>`+"\n", top+36, colors[s.Alg], esc(s.Alg.String()))
	fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="13" fill="#555">%s</text>`+"\n", top+56, esc(blurbs[s.Alg]))
	// Rate line: what one period's quota spread evenly looks like per bin.
	fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ccc"/>`+"\n", leftW, base, leftW+plotW, base)
	writeBars(w, g, s.Alg, counts, ymax, base)
	most := busiest(s.Passed, g.lim.Period)
	col := "#333"
	if most > int(g.lim.Rate) {
		col = "#c00"
	}
	fmt.Fprintf(w, `<text x="%d" y="%.1f" font-size="22" font-weight="bold" fill="%s">%d</text>`+"\n", leftW+plotW+24, top+40, col, most)
	fmt.Fprintf(w, `<text x="%d" y="%.1f" font-size="12" fill="#555">%s</text>`+"\n", leftW+plotW+24, top+58, esc("most in any "+fmtDur(g.lim.Period)))
	writeBurstBracket(w, g, s.Passed, top)
}

// writeBars draws one row's bars on the baseline base, scaled so that ymax
// fills the bar area, each labelled with its count from 2 up.
func writeBars(w io.Writer, g chartGeom, alg core.Algorithm, counts []int, ymax int, base float64) {
	for b, c := range counts {
		if c == 0 {
			continue
		}
		h := float64(barAreaH) * float64(c) / float64(ymax)
		x0 := g.x(time.Duration(b) * g.bin)
		bw := g.x(time.Duration(b+1)*g.bin) - x0
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d passed in [%s, %s)</title></rect>`+"\n",
			x0+1.5, base-h, bw-3, h, colors[alg], c, fmtDur(time.Duration(b)*g.bin), fmtDur(time.Duration(b+1)*g.bin))
		if c >= 2 {
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#333">%d</text>`+"\n", x0+bw/2, base-h-3, c)
		}
	}
}

// writeBurstBracket brackets, in the row whose top is top, the tightest run
// of twice the rate passed on within half a period, which straddles a window
// boundary; it draws nothing when there is no such run.
func writeBurstBracket(w io.Writer, g chartGeom, passed []time.Duration, top float64) {
	n := int(2 * g.lim.Rate)
	span, ok := tightest(passed, n)
	if !ok || span >= g.lim.Period/2 {
		return
	}
	i0 := 0
	for i := range len(passed) - n + 1 {
		if passed[i+n-1]-passed[i] == span {
			i0 = i
			break
		}
	}
	x0 := g.x(passed[i0].Truncate(g.bin))
	x1 := g.x(passed[i0+n-1].Truncate(g.bin) + g.bin)
	y := top + 5
	fmt.Fprintf(w, `<path d="M%.1f %.1f V%.1f H%.1f V%.1f" fill="none" stroke="#c00" stroke-width="1.5"/>`+"\n", x0, y+6, y, x1, y+6)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold" fill="#c00">%s</text>`+"\n", x1+6, y+10,
		esc(fmt.Sprintf("%d within %s", 2*g.lim.Rate, fmtDur(span))))
}

// writeTimeAxis draws the time axis under the rows, ticked every half period,
// and the footnote below it.
func writeTimeAxis(w io.Writer, g chartGeom) {
	fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`+"\n", leftW, g.plotBottom, leftW+plotW, g.plotBottom)
	for t := time.Duration(0); t <= g.plan.End; t += g.lim.Period / 2 {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", g.x(t), g.plotBottom, g.x(t), g.plotBottom+6)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>`+"\n", g.x(t), g.plotBottom+22, esc(fmtDur(t)))
	}
	fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="13" fill="#444">%s</text>`+"\n", g.plotBottom+50,
		esc(fmt.Sprintf("Dashed: window boundaries (every %s). Right: the most requests passed on in any %s, red when above the rate. Drawn by examples/simulate.", fmtDur(g.lim.Period), fmtDur(g.lim.Period))))
}

// tightest returns the shortest span holding n consecutive instants (sorted),
// measured from the first to just past the last at the resolution of the
// instants themselves, and false when there are fewer than n.
func tightest(times []time.Duration, n int) (time.Duration, bool) {
	if n <= 0 || len(times) < n {
		return 0, false
	}
	best := times[n-1] - times[0]
	for i := 1; i+n-1 < len(times); i++ {
		best = min(best, times[i+n-1]-times[i])
	}
	return best, true
}

// fmtDur prints a duration briefly: 800ms, 1s, 1.5s.
func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}
