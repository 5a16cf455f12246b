package model

import (
	"math"
	"testing"
)

func TestMergeSegments(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{
		{1, 0}, {10, 0},
		{11, 2},  // a first pass of 2, then 10 remain
		{19, 10}, // (19−1) mod 9 = 0: a first pass of 10
		{21, 13}, // 3, then 10
		{80, 78}, // 8, then seven of 10
	} {
		if got := mergeSegments(c.n); got != c.want {
			t.Errorf("mergeSegments(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

func TestDistinctKeys(t *testing.T) {
	for _, k := range []float64{50, 995, 1e5} {
		in := 22480.0
		if got := distinctKeys(in, combined(in, k)); math.Abs(got-k) > 1e-6*k {
			t.Errorf("distinctKeys(%v, combined(%v, %v)) = %v", in, in, k, got)
		}
	}
}

// TestSpillTraffic holds the spill arithmetic to the maps' FILE bytes of
// the runs of 2026-12-03 (strata model validate -cases nodes-6,data-10x,
// the HDD profile's first repeat): calibrated on the three-node run, the
// six-node and the ten-times-the-data runs' bytes come out within
// 6%, where per byte of data they were 11–89% off.
func TestSpillTraffic(t *testing.T) {
	const text, shuf = 50331648.0, 50331738.0
	wc := &Spill{OutBytes: 105820645 / text, RecordBytes: 105820645.0 / 7890359, SortMB: 1}
	wc.Keys = distinctKeys(7890359.0/351, 349398.0/351)
	sh := &Spill{OutBytes: 1, RecordBytes: shuf / 128197, SortMB: 1}
	for _, c := range []struct {
		name         string
		s            *Spill
		measW, measR float64 // at calibration: three maps, 1 MB buffer
		bytes, d     float64
		maps         int
		sortMB       float64
		wantW, wantR float64
	}{
		{"wordcount nodes-6", wc, 14924694, 14878641, text, text, 6, 1, 10539738, 10447092},
		{"wordcount data-10x", wc, 14924694, 14878641, text, 10 * text, 4, 2, 78939176, 78877772},
		{"shuffle nodes-6", sh, 134427840, 83726229, shuf, shuf, 6, 1, 108106834, 57402536},
		{"shuffle data-10x", sh, 134427840, 83726229, shuf, 503316480, 4, 2, 1513492036, 1006474245},
	} {
		f := c.s.files(c.measW/c.bytes, c.measR/c.bytes, c.d, c.maps, c.sortMB, c.bytes, 3)
		w, r := f.w, f.r
		w, r = w*c.d, r*c.d
		if math.Abs(w/c.wantW-1) > 0.06 || math.Abs(r/c.wantR-1) > 0.06 {
			t.Errorf("%s: written %.0f read %.0f, measured %.0f and %.0f", c.name, w, r, c.wantW, c.wantR)
		}
		// The calibration itself is its measurement.
		if f0 := c.s.files(c.measW/c.bytes, c.measR/c.bytes, c.bytes, 3, 1, c.bytes, 3); math.Abs(f0.w*c.bytes-c.measW) > 1 || math.Abs(f0.r*c.bytes-c.measR) > 1 || f0.perRequest != 1 || f0.seekShare != 1 {
			t.Errorf("%s: calibration comes out as %+v", c.name, f0)
		}
	}
}

func TestCappedShares(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		d     float64
		slots int
		want  int
	}{{48 * mib, 3, 3}, {480 * mib, 3, 4}, {384 * mib, 3, 3}, {48 * mib, 6, 6}} {
		if got := cappedShares(c.d, c.slots, 128*mib); got != c.want {
			t.Errorf("cappedShares(%v MiB, %d) = %d, want %d", c.d/mib, c.slots, got, c.want)
		}
	}
}
