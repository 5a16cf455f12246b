package experiment

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart is a grouped bar chart, the shape of the papers' figures: one
// group of bars per category (a profile, a file count), one bar per
// series (TeraGen, TeraSort, total; one per profile) with a legend.
type Chart struct {
	Title, YLabel string
	Groups        []string
	Series        []string
	// Values[s][g] is series s in group g; NaN leaves the bar out.
	Values [][]float64
}

// chartColors are the series' fills, in order.
var chartColors = []string{"#4472c4", "#c0504d", "#9bbb59", "#8064a2", "#f79646", "#4bacc6"}

// Chart geometry in SVG user units.
const (
	chartW, chartH         = 900, 520
	plotX, plotY           = 80, 60
	plotW, plotH           = 780, 360
	legendY                = chartH - 30
	chartTicks             = 5
	barGapFrac     float64 = 0.25 // of a group's width, between groups
)

// niceCeil is the smallest 1, 2, 2.5 or 5 × 10^k at or above v.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= v*(1-1e-12) {
			return m * e
		}
	}
	return 10 * e
}

// WriteSVG writes c as a standalone SVG document. Each bar is a rect with
// class "bar" and its value in data-value; its height is proportional to
// the value on an axis from 0 to a round number at or above the largest.
func (c *Chart) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	esc := html.EscapeString
	max := 0.0
	for _, row := range c.Values {
		for _, v := range row {
			if !math.IsNaN(v) && v > max {
				max = v
			}
		}
	}
	top := niceCeil(max)
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">`+"\n", chartW, chartH, chartW, chartH)
	p(`<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	p(`<text x="%d" y="30" text-anchor="middle" font-size="18" font-weight="bold">%s</text>`+"\n", chartW/2, esc(c.Title))
	p(`<text transform="translate(22 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", plotY+plotH/2, esc(c.YLabel))
	for i := 0; i <= chartTicks; i++ {
		v := top * float64(i) / chartTicks
		y := float64(plotY+plotH) - float64(plotH)*float64(i)/chartTicks
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`+"\n", plotX, y, plotX+plotW, y)
		p(`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotX-6, y, formatTick(v))
	}
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000000"/>`+"\n", plotX, plotY+plotH, plotX+plotW, plotY+plotH)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000000"/>`+"\n", plotX, plotY, plotX, plotY+plotH)
	ng, ns := len(c.Groups), len(c.Series)
	if ng > 0 && ns > 0 {
		groupW := float64(plotW) / float64(ng)
		barW := groupW * (1 - barGapFrac) / float64(ns)
		for g, name := range c.Groups {
			gx := float64(plotX) + groupW*float64(g) + groupW*barGapFrac/2
			for s := range c.Series {
				if s >= len(c.Values) || g >= len(c.Values[s]) || math.IsNaN(c.Values[s][g]) {
					continue
				}
				v := c.Values[s][g]
				h := float64(plotH) * math.Max(v, 0) / top
				x := gx + barW*float64(s)
				y := float64(plotY+plotH) - h
				p(`<rect class="bar" data-series="%s" data-group="%s" data-value="%g" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
					esc(c.Series[s]), esc(name), v, x, y, barW, h, chartColors[s%len(chartColors)], esc(name), esc(c.Series[s]), formatTick(v))
				if barW >= 28 {
					p(`<text x="%.2f" y="%.2f" text-anchor="middle" font-size="11">%s</text>`+"\n", x+barW/2, y-4, formatTick(v))
				}
			}
			p(`<text x="%.2f" y="%d" text-anchor="middle">%s</text>`+"\n", gx+groupW*(1-barGapFrac)/2, plotY+plotH+20, esc(name))
		}
	}
	lx := float64(plotX)
	for s, name := range c.Series {
		p(`<rect x="%.1f" y="%d" width="14" height="14" fill="%s"/>`+"\n", lx, legendY-11, chartColors[s%len(chartColors)])
		p(`<text x="%.1f" y="%d">%s</text>`+"\n", lx+20, legendY, esc(name))
		lx += 40 + 8*float64(len(name))
	}
	p("</svg>\n")
	return bw.Flush()
}

// formatTick prints a value with three significant digits (all digits
// from 100 up), without trailing zeros.
func formatTick(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}
