package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/mapreduce"
)

// Attempts that overlap on a node get separate lanes, one that starts
// after another ended reuses its lane; the timeline draws each phase.
func TestTimelineLanes(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	reports := []mapreduce.AttemptReport{
		{ID: "attempt_1_0001_m_000000_0", Type: 'm', Host: "dn0", State: "SUCCEEDED", Start: at(0), Finish: at(4), Phases: mapreduce.Phases{MapFinish: at(3)}},
		{ID: "attempt_1_0001_m_000001_0", Type: 'm', Host: "dn0", State: "SUCCEEDED", Start: at(1), Finish: at(5), Phases: mapreduce.Phases{MapFinish: at(4)}},
		{ID: "attempt_1_0001_m_000002_0", Type: 'm', Host: "dn1", State: "FAILED", Start: at(0), Finish: at(2)},
		{ID: "attempt_1_0001_r_000000_0", Type: 'r', Host: "dn0", State: "SUCCEEDED", Start: at(4.5), Finish: at(9),
			Phases: mapreduce.Phases{ShuffleFinish: at(6), SortFinish: at(7)}},
	}
	as := attemptAccounts(reports)
	slots := map[string]int{}
	for _, a := range as {
		slots[a.Task] = a.Slot
	}
	if slots["m_000000"] != 0 || slots["m_000001"] != 1 || slots["m_000002"] != 0 || slots["r_000000"] != 0 {
		t.Fatalf("slots %v", slots)
	}
	ja := &JobAccounting{Attempts: as}
	if m := ja.MeanPhases(); m[phaseMap] != 3 || m[phaseSpills] != 1 || m[phaseShuffle] != 1.5 || m[phaseMerge] != 1 || m[phaseReduce] != 2 {
		t.Errorf("mean phases %v", m)
	}
	tl := NewTimeline("test", ja)
	if len(tl.Lanes) != 3 || tl.Lanes[0] != "dn0 slot 1" || tl.Lanes[2] != "dn1 slot 1" {
		t.Errorf("lanes %v", tl.Lanes)
	}
	var b bytes.Buffer
	if err := tl.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if n := strings.Count(svg, `class="phase"`); n != 2+2+1+3 {
		t.Errorf("%d phase rects", n)
	}
	for _, w := range []string{`data-phase="shuffle" data-start="4.500" data-end="6.000"`, `data-phase="other, failed or killed"`} {
		if !strings.Contains(svg, w) {
			t.Errorf("svg lacks %s", w)
		}
	}
}
