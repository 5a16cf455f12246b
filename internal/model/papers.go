package model

import (
	"fmt"
	"io"
)

// sandiskTable4 is the SanDisk paper's Table 4: TeraGen and TeraSort of
// 1 TB in seconds, by its built-in cluster.
var sandiskTable4 = []struct {
	cluster           string
	teragen, terasort float64
}{
	{"sandisk-all-hdd", 4202.5, 7386.5},
	{"sandisk-ssd-intermediate", 4014, 3836},
	{"sandisk-all-ssd", 1148, 3262.5},
}

// PrintPapers predicts w on the papers' clusters and prints each beside
// what the paper published: the SanDisk paper's Table 4 and speed-ups,
// the second paper's jobs at replication 2 and 3 (its figures are charts
// only), and the third paper's clusters' energy per run.
func PrintPapers(out io.Writer, w *Workload, years, kwhPrice float64) error {
	predict := func(name string, repl int) (*Prediction, error) {
		c, err := LoadCluster(name)
		if err != nil {
			return nil, err
		}
		if repl > 0 {
			c.Replication = repl
		}
		return Predict(w, c, years, kwhPrice)
	}
	jobTime := func(p *Prediction, name string) float64 {
		for _, j := range p.Jobs {
			if j.Name == name {
				return j.Phases.Total()
			}
		}
		return 0
	}
	fmt.Fprintln(out, "SanDisk paper, Table 4 (1 TB TeraGen + TeraSort, seconds): paper / predicted")
	tw := newTable(out)
	fmt.Fprintln(tw, "configuration\tteragen\tterasort\ttotal\tspeed-up\tbound of the longest phase\t")
	var base, basePaper float64
	for _, r := range sandiskTable4 {
		p, err := predict(r.cluster, 0)
		if err != nil {
			return err
		}
		g, s := jobTime(p, "teragen"), jobTime(p, "terasort")
		paper := r.teragen + r.terasort
		if base == 0 {
			base, basePaper = g+s, paper
		}
		fmt.Fprintf(tw, "%s\t%.0f / %.0f\t%.0f / %.0f\t%.0f / %.0f\t%.2fx / %.2fx\t%s\t\n", r.cluster, r.teragen, g, r.terasort, s,
			paper, g+s, basePaper/paper, base/(g+s), p.Dominant())
	}
	tw.Flush()

	fmt.Fprintln(out, "\nSecond paper, jobs (Figures 5 and 6; the paper's values are charts only): predicted seconds at its 1 TB-class scale")
	tw = newTable(out)
	fmt.Fprintln(tw, "configuration\treplication\tteragen\tterasort\tteravalidate\t")
	for _, c := range []string{"paper2-12hdd", "paper2-ssd", "paper2-ssd-card"} {
		for _, r := range []int{2, 3} {
			p, err := predict(c, r)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t\n", c, r, jobTime(p, "teragen"), jobTime(p, "terasort"), jobTime(p, "teravalidate"))
		}
	}
	tw.Flush()

	fmt.Fprintln(out, "\nThird paper, energy per run of this workload (the paper's 7.7x and 3.4x are for its Zones applications, not this workload)")
	tw = newTable(out)
	fmt.Fprintln(tw, "cluster\truntime (s)\tkWh per run\tbound of the longest phase\t")
	var kwh [2]float64
	for i, c := range []string{"amdahl-blade", "occ-node"} {
		p, err := predict(c, 0)
		if err != nil {
			return err
		}
		kwh[i] = p.KWhPerJob
		fmt.Fprintf(tw, "%s\t%.0f\t%.4f\t%s\t\n", c, p.Runtime, p.KWhPerJob, p.Dominant())
	}
	tw.Flush()
	if kwh[0] > 0 {
		fmt.Fprintf(out, "OCC over Amdahl energy per run: %.2fx (paper, for Neighbor Searching at 30\": 7.7x; Neighbor Statistics: 3.4x)\n", kwh[1]/kwh[0])
	}
	return nil
}
