package media

import (
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

// The papers' devices: each model's headline figures follow from its
// parameters as docs/MEDIA.md's table states them.
func TestPaperPresets(t *testing.T) {
	for _, tc := range []struct {
		name             string
		seqRead          float64 // MB/s, 1 MiB requests (less the latency per request)
		iops1Lo, iops1Hi float64 // random 4 KiB reads at QD1
	}{
		{"sas-15k", 163, 175, 190},           // 1/(5.4 ms + transfer): a 15K disk's ~180
		{"cloudspeed-ssd", 450, 9000, 10000}, // 1/(100 us + 9 us)
		{"spinpoint-f1", 100, 70, 80},        // 1/(13.07 ms + 41 us)
		{"vertex", 250, 4500, 5000},          // 1/(200 us + 16 us)
	} {
		p, ok := LookupPreset(tc.name)
		if !ok {
			t.Fatalf("no preset %s", tc.name)
		}
		if err := p.Params.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := p.Params.SequentialMBps(1<<20, false); got < tc.seqRead*0.95 || got > tc.seqRead*1.001 {
			t.Errorf("%s: sequential read %.1f MB/s, want about %v", tc.name, got, tc.seqRead)
		}
		if got := p.Params.RandomIOPS(4096, 1); got < tc.iops1Lo || got > tc.iops1Hi {
			t.Errorf("%s: random 4 KiB IOPS at QD1 %.0f, want %v..%v", tc.name, got, tc.iops1Lo, tc.iops1Hi)
		}
		if p.Source == "" {
			t.Errorf("%s has no source", tc.name)
		}
	}
	if c, _ := LookupPreset("cloudspeed-ssd"); c.Params.RandomIOPS(4096, 32) < 70000 {
		t.Errorf("cloudspeed-ssd at QD32: %.0f IOPS, want its specification's 80,000 or near", c.Params.RandomIOPS(4096, 32))
	}
}

// raid0-<n>-<preset> stripes a preset: n times the bandwidth and the
// parallelism, the member's latency and seek; overrides of the member
// carry over; malformed names are unknown.
func TestRAID0Presets(t *testing.T) {
	v, _ := LookupPreset("vertex")
	r, ok := LookupPreset("raid0-2-vertex")
	if !ok {
		t.Fatal("raid0-2-vertex unknown")
	}
	if r.Params.ReadMBps != 2*v.Params.ReadMBps || r.Params.WriteMBps != 2*v.Params.WriteMBps ||
		r.Params.QueueDepth != 2 || r.Params.Latency != v.Params.Latency || r.Params.Seek != v.Params.Seek {
		t.Errorf("raid0-2-vertex = %+v from %+v", r.Params, v.Params)
	}
	if got := r.Params.RandomIOPS(4096, 2); got < 1.9*v.Params.RandomIOPS(4096, 1) {
		t.Errorf("two striped SSDs serve %f random IOPS at QD2, want twice one's", got)
	}
	for _, bad := range []string{"raid0-1-vertex", "raid0-17-hdd-7200", "raid0-2-", "raid0-x-vertex", "raid0-2-nosuch", "raid1-2-vertex"} {
		if _, ok := LookupPreset(bad); ok {
			t.Errorf("%s resolved", bad)
		}
	}
	c := conf.New()
	c.Set(KeyDirs, "/data/md0=raid0-2-spinpoint-f1")
	c.Set("strata.media.spinpoint-f1.seek", "10ms")
	tab, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	d := tab.Devices[0]
	if d.Preset != "raid0-2-spinpoint-f1" || d.Params.ReadMBps != 200 || d.Params.Seek != 10*time.Millisecond || d.Params.QueueDepth != 2 {
		t.Errorf("parsed %+v", d)
	}
	c.Set(KeyDirs, "/data/md0=raid0-2-floppy")
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), "raid0-<n>-<preset>") {
		t.Errorf("unknown member: %v", err)
	}
}
