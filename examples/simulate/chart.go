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
	plan := planFor(lim)
	bin := lim.Period / 10
	nbins := int(plan.End / bin)
	x := func(d time.Duration) float64 { return leftW + float64(plotW)*float64(d)/float64(plan.End) }

	counts := make([][]int, len(all))
	ymax := int(lim.Rate)
	for i, s := range all {
		counts[i] = make([]int, nbins)
		for _, t := range s.Passed {
			if b := int(t / bin); b < nbins {
				counts[i][b]++
				ymax = max(ymax, counts[i][b])
			}
		}
	}
	height := topH + rowH*len(all) + bottomH

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n", chartW, height, chartW, height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, height)
	fmt.Fprintf(w, `<text x="20" y="30" font-size="20" font-weight="bold">%s</text>`+"\n",
		esc(fmt.Sprintf("The six algorithms at a limit of %s under the same flood", lim)))
	fmt.Fprintf(w, `<text x="20" y="54" font-size="14" fill="#444">%s</text>`+"\n",
		esc(fmt.Sprintf("A client is silent until %s, then sends a request every %s; denied requests are dropped. Bars: requests passed on per %s.", fmtDur(plan.Start), fmtDur(plan.Every), fmtDur(bin))))

	plotTop := float64(topH)
	plotBottom := float64(topH + rowH*len(all))
	// Window boundaries, across every row.
	for t := lim.Period; t <= plan.End; t += lim.Period {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 4"/>`+"\n", x(t), plotTop, x(t), plotBottom)
	}
	for i, s := range all {
		top := float64(topH + rowH*i)
		base := top + 24 + barAreaH
		if i%2 == 1 {
			fmt.Fprintf(w, `<rect x="0" y="%.1f" width="%d" height="%d" fill="#000" fill-opacity="0.035"/>`+"\n", top, chartW, rowH)
		}
		fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="16" font-weight="bold" fill="%s">%s</text>`+"\n", top+36, colors[s.Alg], esc(s.Alg.String()))
		fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="13" fill="#555">%s</text>`+"\n", top+56, esc(blurbs[s.Alg]))
		// Rate line: what one period's quota spread evenly looks like per bin.
		fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ccc"/>`+"\n", leftW, base, leftW+plotW, base)
		for b, c := range counts[i] {
			if c == 0 {
				continue
			}
			h := float64(barAreaH) * float64(c) / float64(ymax)
			x0 := x(time.Duration(b) * bin)
			bw := x(time.Duration(b+1)*bin) - x0
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d passed in [%s, %s)</title></rect>`+"\n",
				x0+1.5, base-h, bw-3, h, colors[s.Alg], c, fmtDur(time.Duration(b)*bin), fmtDur(time.Duration(b+1)*bin))
			if c >= 2 {
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#333">%d</text>`+"\n", x0+bw/2, base-h-3, c)
			}
		}
		most := busiest(s.Passed, lim.Period)
		col := "#333"
		if most > int(lim.Rate) {
			col = "#c00"
		}
		fmt.Fprintf(w, `<text x="%d" y="%.1f" font-size="22" font-weight="bold" fill="%s">%d</text>`+"\n", leftW+plotW+24, top+40, col, most)
		fmt.Fprintf(w, `<text x="%d" y="%.1f" font-size="12" fill="#555">%s</text>`+"\n", leftW+plotW+24, top+58, esc("most in any "+fmtDur(lim.Period)))
		if span, ok := tightest(s.Passed, int(2*lim.Rate)); ok && span < lim.Period/2 {
			// Bracket the burst that straddles a window boundary.
			i0 := 0
			for i := range len(s.Passed) - int(2*lim.Rate) + 1 {
				if s.Passed[i+int(2*lim.Rate)-1]-s.Passed[i] == span {
					i0 = i
					break
				}
			}
			x0 := x(s.Passed[i0].Truncate(bin))
			x1 := x(s.Passed[i0+int(2*lim.Rate)-1].Truncate(bin) + bin)
			y := top + 5
			fmt.Fprintf(w, `<path d="M%.1f %.1f V%.1f H%.1f V%.1f" fill="none" stroke="#c00" stroke-width="1.5"/>`+"\n", x0, y+6, y, x1, y+6)
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="13" font-weight="bold" fill="#c00">%s</text>`+"\n", x1+6, y+10,
				esc(fmt.Sprintf("%d within %s", 2*lim.Rate, fmtDur(span))))
		}
	}
	// Time axis.
	fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`+"\n", leftW, plotBottom, leftW+plotW, plotBottom)
	for t := time.Duration(0); t <= plan.End; t += lim.Period / 2 {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x(t), plotBottom, x(t), plotBottom+6)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>`+"\n", x(t), plotBottom+22, esc(fmtDur(t)))
	}
	fmt.Fprintf(w, `<text x="20" y="%.1f" font-size="13" fill="#444">%s</text>`+"\n", plotBottom+50,
		esc(fmt.Sprintf("Dashed: window boundaries (every %s). Right: the most requests passed on in any %s, red when above the rate. Drawn by examples/simulate.", fmtDur(lim.Period), fmtDur(lim.Period))))
	fmt.Fprintln(w, `</svg>`)
	return w.Flush()
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
