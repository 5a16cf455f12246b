package experiment

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// accountedStep is the step whose accounting the tables show.
const accountedStep = "terasort"

// printAccounting prints, for each profile's first run's TeraSort, the CPU
// and FILE counters, the mean phase lengths, the intermediate-space peak
// and the devices' work.
func (r *Results) printAccounting(w io.Writer) {
	type row struct {
		name string
		ja   *JobAccounting
	}
	var rows []row
	for _, p := range r.Profiles {
		if len(p.Runs) == 0 {
			continue
		}
		if ja := p.Runs[0].Job(accountedStep); ja != nil && ja.JobID != "" {
			rows = append(rows, row{p.Name, ja})
		}
	}
	if len(rows) == 0 {
		return
	}
	col := nameColumn(r.profileNames())
	fmt.Fprintf(w, "\nTeraSort's CPU and intermediate data, run 1 (task CPU: the children's rusage; FILE: local spills, merges, map output, shuffle)\n")
	tw := newTable(w)
	fmt.Fprintf(tw, "%s\tterasort (s)\ttask user (s)\ttask sys (s)\tdaemons (s)\tFILE read\tFILE written\tspilled records\tmap output\tshuffled\tpeak/node\tof input/node\t\n", col(configHeader))
	for _, x := range rows {
		var user, sys float64
		for _, a := range x.ja.Attempts {
			user, sys = user+a.CPU.User, sys+a.CPU.System
		}
		daemons := 0.0
		for _, d := range x.ja.Daemons {
			daemons += d.User + d.System
		}
		var peak int64
		var of float64
		for _, n := range x.ja.Nodes {
			if n.IntermediatePeak > peak {
				peak, of = n.IntermediatePeak, n.OfInput
			}
		}
		c := x.ja.Counters
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%d\t%s\t%s\t%s\t%.0f%%\t\n", col(x.name), x.ja.Seconds, user, sys, daemons,
			sizeString(c["FILE_BYTES_READ"]), sizeString(c["FILE_BYTES_WRITTEN"]), c["SPILLED_RECORDS"],
			sizeString(c["MAP_OUTPUT_MATERIALIZED_BYTES"]), sizeString(c["REDUCE_SHUFFLE_BYTES"]), sizeString(peak), of*100)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nTeraSort's phases, run 1: mean seconds per attempt (map = read + map + spills; timeline-<profile>.svg)\n")
	tw = newTable(w)
	fmt.Fprintf(tw, "%s\tmaps\treduces", col(configHeader))
	for _, ph := range phaseOrder {
		fmt.Fprintf(tw, "\t%s", ph)
	}
	fmt.Fprintf(tw, "\t\n")
	for _, x := range rows {
		var maps, reduces int
		for _, a := range x.ja.Attempts {
			switch {
			case a.State != "SUCCEEDED":
			case a.Type == "map":
				maps++
			case a.Type == "reduce":
				reduces++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d", col(x.name), maps, reduces)
		m := x.ja.MeanPhases()
		for _, ph := range phaseOrder {
			if v, ok := m[ph]; ok {
				fmt.Fprintf(tw, "\t%.2f", v)
			} else {
				fmt.Fprintf(tw, "\t-")
			}
		}
		fmt.Fprintf(tw, "\t\n")
	}
	tw.Flush()

	any := false
	for _, x := range rows {
		any = any || len(x.ja.Devices) > 0
	}
	if !any {
		return
	}
	fmt.Fprintf(w, "\nEmulated devices during TeraSort, run 1 (all nodes' devices of a name together; busy: the model's service time, mean per node)\n")
	tw = newTable(w)
	fmt.Fprintf(tw, "%s\tdevice\tpreset\tread\twritten\trequests\tseeks\tbusy (s)\tbusy\t\n", col(configHeader))
	for _, x := range rows {
		type agg struct {
			preset      string
			r, wr, q, s uint64
			busy        float64
			nodes       int
		}
		by := map[string]*agg{}
		var names []string
		for _, d := range x.ja.Devices {
			a := by[d.Device]
			if a == nil {
				a = &agg{preset: d.Preset}
				by[d.Device] = a
				names = append(names, d.Device)
			}
			a.r, a.wr, a.q, a.s, a.busy, a.nodes = a.r+d.ReadBytes, a.wr+d.WriteBytes, a.q+d.Requests, a.s+d.Seeks, a.busy+d.Busy, a.nodes+1
		}
		sort.Strings(names)
		for _, n := range names {
			a := by[n]
			busy := a.busy / float64(a.nodes)
			util := 0.0
			if x.ja.Seconds > 0 {
				util = busy / x.ja.Seconds * 100
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.2f\t%.0f%%\t\n", col(x.name), n, a.preset, sizeString(int64(a.r)), sizeString(int64(a.wr)), a.q, a.s, busy, util)
		}
	}
	tw.Flush()
}

// sizeString is n bytes with three significant digits in decimal units
// ("20.4 MB").
func sizeString(n int64) string {
	v, unit := float64(n), "B"
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 {
			break
		}
		v, unit = v/1000, u
	}
	return formatTick(v) + " " + unit
}
