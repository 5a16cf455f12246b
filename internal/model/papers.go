package model

import (
	"fmt"
	"io"
	"slices"
	"strings"
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

	return printPaper3(out, w)
}

// printPaper3 predicts the Zones applications (when the workload has
// them) and the workload's runtime on the Amdahl blades and the OCC
// nodes, and prints the energy ratios beside the paper's 7.7x (Neighbour
// Searching at 30") and 3.4x (Neighbour Statistics).
func printPaper3(out io.Writer, w *Workload) error {
	var preds [2]*Prediction
	for i, c := range []string{"amdahl-blade", "occ-node"} {
		cl, err := LoadCluster(c)
		if err != nil {
			return err
		}
		// The clusters' data is the paper's 25 GB catalogue: scale the
		// workload so its Zones input is that size.
		for _, j := range w.Jobs {
			if strings.HasPrefix(j.Name, "neighbors-") && j.MapHDFSRead*j.Bytes > 0 && w.Calibration.DataBytes > 0 {
				cl.DataBytes = int64(float64(cl.DataBytes) / (j.MapHDFSRead * j.Bytes) * float64(w.Calibration.DataBytes))
			}
		}
		p, err := Predict(w, cl, 3, 0.1075)
		if err != nil {
			return err
		}
		preds[i] = p
	}
	fmt.Fprintln(out, "\nThird paper, Table 3 and energy (Amdahl blades / OCC nodes; the paper gives no Table 3 cell)")
	if !slices.ContainsFunc(w.Jobs, func(j Job) bool { return strings.HasPrefix(j.Name, "neighbor") }) {
		fmt.Fprintln(out, "(no Zones jobs in this workload: calibrate with a strata experiment amdahl -parts table3 run too, -results DIR1,DIR2)")
		return nil
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "job\tAmdahl (s)\tOCC (s)\tAmdahl kWh\tOCC kWh\tOCC/Amdahl energy\tpaper\tAmdahl bound (map)\tOCC bound (map)\t")
	paper := map[string]string{"neighbors-30": "7.7x", "neighborstats": "3.4x"}
	for k := range preds[0].Jobs {
		a, o := preds[0].Jobs[k], preds[1].Jobs[k]
		if !strings.HasPrefix(a.Name, "neighbor") {
			continue
		}
		ratio := "-"
		if a.KWh > 0 {
			ratio = fmt.Sprintf("%.2fx", o.KWh/a.KWh)
		}
		p := paper[a.Name]
		if p == "" {
			p = "-"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.4f\t%.4f\t%s\t%s\t%s\t%s\t\n", a.Name, a.Phases.Total(), o.Phases.Total(), a.KWh, o.KWh, ratio, p, a.Bounds[PhaseMap], o.Bounds[PhaseMap])
	}
	tw.Flush()
	fmt.Fprintln(out, "(the Zones jobs' demands scale linearly with the catalogue; a real sky's neighbour pairs grow faster, docs/MODEL.md)")
	return nil
}
