package experiment

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
)

// Timeline is a Gantt chart of a job: one lane per node and slot, one bar
// per task attempt, coloured by phase.
type Timeline struct {
	Title string
	// Lanes label the rows, top to bottom ("dn0 slot 1").
	Lanes []string
	Bars  []TimelineBar
}

// TimelineBar is one attempt: its segments are consecutive phases.
type TimelineBar struct {
	Lane     int
	Label    string // the attempt id
	Segments []TimelineSegment
}

// TimelineSegment is one phase of an attempt, in seconds from the job's
// start.
type TimelineSegment struct {
	Phase      string
	Start, End float64
}

// phaseOther is the phase of attempts without phase times (a job
// cleanup, a failed or killed attempt).
const phaseOther = "other, failed or killed"

// phaseColors are the phases' fills.
var phaseColors = map[string]string{
	phaseMap: "#4472c4", phaseSpills: "#8faadc", phaseShuffle: "#c0504d", phaseMerge: "#f79646", phaseReduce: "#9bbb59", phaseOther: "#a6a6a6",
}

// Timeline geometry in SVG user units.
const (
	tlW, tlLeft, tlRight, tlTop = 1000, 150, 20, 60
	tlLane, tlBar               = 22, 16
	tlBottom                    = 70 // axis labels and legend
)

// NewTimeline lays out ja's attempts: a lane per node and slot (the
// slots AttemptAccount assigned), nodes in name order.
func NewTimeline(title string, ja *JobAccounting) *Timeline {
	type key struct {
		node string
		slot int
	}
	var keys []key
	seen := map[key]bool{}
	for _, a := range ja.Attempts {
		k := key{a.Node, a.Slot}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].node != keys[j].node {
			return keys[i].node < keys[j].node
		}
		return keys[i].slot < keys[j].slot
	})
	lane := map[key]int{}
	t := &Timeline{Title: title}
	for i, k := range keys {
		lane[k] = i
		name := k.node
		if name == "" {
			name = "local"
		}
		t.Lanes = append(t.Lanes, fmt.Sprintf("%s slot %d", name, k.slot+1))
	}
	for _, a := range ja.Attempts {
		b := TimelineBar{Lane: lane[key{a.Node, a.Slot}], Label: a.ID}
		ph := a.Phases()
		switch {
		case ph != nil && a.Type == "map":
			b.Segments = []TimelineSegment{{phaseMap, a.Start, a.MapFinish}, {phaseSpills, a.MapFinish, a.End}}
		case ph != nil && a.Type == "reduce":
			b.Segments = []TimelineSegment{{phaseShuffle, a.Start, a.ShuffleFinish}, {phaseMerge, a.ShuffleFinish, a.SortFinish}, {phaseReduce, a.SortFinish, a.End}}
		default:
			b.Segments = []TimelineSegment{{phaseOther, a.Start, a.End}}
		}
		t.Bars = append(t.Bars, b)
	}
	return t
}

// WriteSVG writes t as a standalone SVG document. Each phase of each
// attempt is a rect with class "phase" and data-attempt, data-phase,
// data-start and data-end (seconds) attributes.
func (t *Timeline) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	esc := html.EscapeString
	end := 0.0
	for _, b := range t.Bars {
		for _, s := range b.Segments {
			end = math.Max(end, s.End)
		}
	}
	top := niceCeil(end)
	plotW := float64(tlW - tlLeft - tlRight)
	h := tlTop + tlLane*max(len(t.Lanes), 1) + tlBottom
	x := func(s float64) float64 { return tlLeft + plotW*math.Max(s, 0)/top }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", tlW, h, tlW, h)
	p(`<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", tlW, h)
	p(`<text x="%d" y="28" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", tlW/2, esc(t.Title))
	axisY := tlTop + tlLane*len(t.Lanes)
	for i := 0; i <= chartTicks; i++ {
		v := top * float64(i) / chartTicks
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`+"\n", x(v), tlTop-4, x(v), axisY)
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), axisY+16, formatTick(v))
	}
	p(`<text x="%.1f" y="%d" text-anchor="middle">seconds from the job's first attempt</text>`+"\n", tlLeft+plotW/2, axisY+32)
	for i, l := range t.Lanes {
		p(`<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", tlLeft-8, tlTop+tlLane*i+tlLane/2, esc(l))
	}
	for _, b := range t.Bars {
		y := tlTop + tlLane*b.Lane + (tlLane-tlBar)/2
		for _, s := range b.Segments {
			wd := math.Max(x(s.End)-x(s.Start), 0.5)
			p(`<rect class="phase" data-attempt="%s" data-phase="%s" data-start="%.3f" data-end="%.3f" x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s %s: %.2f–%.2f s</title></rect>`+"\n",
				esc(b.Label), esc(s.Phase), s.Start, s.End, x(s.Start), y, wd, tlBar, phaseColors[s.Phase], esc(b.Label), esc(s.Phase), s.Start, s.End)
		}
	}
	lx := float64(tlLeft)
	for _, ph := range append(append([]string{}, phaseOrder...), phaseOther) {
		p(`<rect x="%.1f" y="%d" width="12" height="12" fill="%s"/>`+"\n", lx, h-22, phaseColors[ph])
		p(`<text x="%.1f" y="%d">%s</text>`+"\n", lx+16, h-12, esc(ph))
		lx += 36 + 7*float64(len(ph))
	}
	p("</svg>\n")
	return bw.Flush()
}
