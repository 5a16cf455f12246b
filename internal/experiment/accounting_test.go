package experiment

import (
	"strings"
	"testing"
)

// checkAccounting checks a profile's first run's TeraSort accounting for
// sanity: every attempt has a span, ordered phases inside it, CPU time
// and counters; the job's counters add up; the nodes and devices are
// there.
func checkAccounting(t *testing.T, p ProfileResult, nodes int, rows uint64) {
	t.Helper()
	if len(p.Runs) == 0 {
		t.Fatalf("%s: no runs", p.Name)
	}
	for _, step := range []string{"teragen", "terasort"} {
		if ja := p.Runs[0].Job(step); ja == nil || ja.JobID == "" || len(ja.Attempts) == 0 || ja.Seconds <= 0 {
			t.Fatalf("%s: %s accounting %+v", p.Name, step, ja)
		}
	}
	ja := p.Runs[0].Job("terasort")
	if ja.InputBytes != int64(rows)*100 {
		t.Errorf("%s: input %d bytes", p.Name, ja.InputBytes)
	}
	var maps, reduces int
	var cpuMS int64
	var cpu float64
	// The job's counters are its tasks' successful attempts': a losing
	// speculative attempt that finished anyway is KILLED ("Already
	// completed TIP"), so each task has one SUCCEEDED attempt.
	succeeded := map[string]string{}
	for _, a := range ja.Attempts {
		cpu += a.CPU.User + a.CPU.System
		if a.State != "SUCCEEDED" {
			continue
		}
		task := a.ID[:strings.LastIndexByte(a.ID, '_')]
		if other, ok := succeeded[task]; ok {
			t.Errorf("%s: task %s succeeded twice: %s and %s", p.Name, task, other, a.ID)
		}
		succeeded[task] = a.ID
		if a.Start < 0 || a.End < a.Start || a.Node == "" || a.Tracker == "" {
			t.Errorf("%s: attempt %+v", p.Name, a)
		}
		if a.Type != "cleanup" && a.CPU.User+a.CPU.System <= 0 {
			t.Errorf("%s: attempt %s has no CPU time: %+v", p.Name, a.ID, a.CPU)
		}
		cpuMS += a.Counters["CPU_MILLISECONDS"]
		switch a.Type {
		case "map":
			maps++
			if !(a.Start <= a.MapFinish && a.MapFinish <= a.End) {
				t.Errorf("%s: map %s: start %v, map finish %v, end %v", p.Name, a.ID, a.Start, a.MapFinish, a.End)
			}
			if a.Counters["FILE_BYTES_WRITTEN"] < a.Counters["MAP_OUTPUT_MATERIALIZED_BYTES"] || a.Counters["MAP_OUTPUT_MATERIALIZED_BYTES"] <= 0 {
				t.Errorf("%s: map %s counters %v", p.Name, a.ID, a.Counters)
			}
		case "reduce":
			reduces++
			if !(a.Start <= a.ShuffleFinish && a.ShuffleFinish <= a.SortFinish && a.SortFinish <= a.End) {
				t.Errorf("%s: reduce %s: start %v, shuffle %v, sort %v, end %v", p.Name, a.ID, a.Start, a.ShuffleFinish, a.SortFinish, a.End)
			}
			if a.Counters["REDUCE_SHUFFLE_BYTES"] <= 0 || a.Counters["SHUFFLED_MAPS"] <= 0 {
				t.Errorf("%s: reduce %s counters %v", p.Name, a.ID, a.Counters)
			}
		}
	}
	if maps == 0 || reduces == 0 {
		t.Errorf("%s: %d maps and %d reduces succeeded", p.Name, maps, reduces)
	}
	c := ja.Counters
	if c["CPU_MILLISECONDS"] != cpuMS || cpuMS <= 0 {
		t.Errorf("%s: job CPU_MILLISECONDS %d, its successful attempts' %d", p.Name, c["CPU_MILLISECONDS"], cpuMS)
	}
	if c["FILE_BYTES_WRITTEN"] < c["MAP_OUTPUT_MATERIALIZED_BYTES"] || c["SPILLED_RECORDS"] < int64(rows) || c["REDUCE_SHUFFLE_BYTES"] != c["MAP_OUTPUT_MATERIALIZED_BYTES"] {
		t.Errorf("%s: job counters %v", p.Name, c)
	}
	// Every task child was reaped by this process: their rusage is in
	// RUSAGE_CHILDREN (which counts in whole clock ticks at worst).
	if ja.Children == nil || ja.Children.User+ja.Children.System < cpu-0.05*float64(len(ja.Attempts)) {
		t.Errorf("%s: task children's CPU %+v, the attempts' %.3f s", p.Name, ja.Children, cpu)
	}
	if len(ja.Daemons) == 0 || ja.Daemons[0].User <= 0 {
		t.Errorf("%s: daemons' CPU %+v", p.Name, ja.Daemons)
	}
	if len(ja.Nodes) != nodes {
		t.Fatalf("%s: nodes %+v", p.Name, ja.Nodes)
	}
	var peak int64
	for _, n := range ja.Nodes {
		peak += n.IntermediatePeak
	}
	if peak <= 0 {
		t.Errorf("%s: no intermediate space measured: %+v", p.Name, ja.Nodes)
	}
	// A modelled device (not ram, which charges nothing) under HDFS
	// was written: TeraSort's output.
	if strings.Contains(p.Media, "=nvme") {
		var written, requests uint64
		for _, d := range ja.Devices {
			if d.Preset == "nvme" {
				written, requests = written+d.WriteBytes, requests+d.Requests
			}
		}
		if written < uint64(rows)*100 || requests == 0 {
			t.Errorf("%s: emulated devices %+v", p.Name, ja.Devices)
		}
	}
}
