package model

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
}

// PrintPrediction prints each job's phases with what bounds them, then
// the runtime, jobs per day, cost and energy per job.
func PrintPrediction(w io.Writer, p *Prediction) {
	cl := p.Cluster
	cpu := fmt.Sprintf("%g cores at %gx", cl.Cores, cl.Speed)
	if cl.SharedCores > 0 {
		cpu = fmt.Sprintf("%g cores shared at %gx", cl.SharedCores, cl.Speed)
	}
	link := "unlimited links"
	if cl.LinkMbps > 0 {
		link = fmt.Sprintf("%g Mbit/s links", cl.LinkMbps)
	}
	fmt.Fprintf(w, "%s: %d nodes (%s, %d map + %d reduce slots, %s), HDFS on %s, intermediate data on %s, replication %d\n",
		cl.Name, cl.Nodes, cpu, cl.MapSlots, cl.ReduceSlots, link, devList(cl, cl.Volumes), devList(cl, cl.LocalDirs), cl.Replication)
	tw := newTable(w)
	fmt.Fprintln(tw, "job\tdata\tmaps\treduces\tmap (s)\tbound\tshuffle (s)\tbound\treduce (s)\tbound\toverhead (s)\ttotal (s)\t")
	for _, j := range p.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f\t%s\t%.2f\t%s\t%.2f\t%s\t%.2f\t%.2f\t\n", j.Name, Bytes(j.Bytes), j.Maps, j.Reduces,
			j.Phases.Map, j.Bounds[PhaseMap], j.Phases.Shuffle, j.Bounds[PhaseShuffle], j.Phases.Reduce, j.Bounds[PhaseReduce],
			j.Phases.Overhead, j.Phases.Total())
	}
	tw.Flush()
	fmt.Fprintf(w, "runtime (%s): %.2f s, %.1f runs a day, %.0f in %g years", strings.Join(p.totalNames(), " + "), p.Runtime, p.JobsPerDay, p.Jobs3y, p.Years)
	if cl.Price > 0 {
		fmt.Fprintf(w, ", $%.5f per run", p.CostPerJob)
	}
	if p.KWhPerJob > 0 {
		fmt.Fprintf(w, ", %.4f kWh per run ($%.5f at $%g/kWh)", p.KWhPerJob, p.EnergyCostPerJob, p.KWhPrice)
	}
	fmt.Fprintln(w)
}

func (p *Prediction) totalNames() []string {
	var out []string
	for _, j := range p.Jobs {
		if j.inTotal {
			out = append(out, j.Name)
		}
	}
	return out
}

func devList(cl *Cluster, names []string) string {
	var parts []string
	for _, n := range names {
		if d := cl.Device(n); d != nil {
			parts = append(parts, d.Preset)
		}
	}
	return strings.Join(parts, "+")
}

// Bytes formats a byte count as the experiment's tables do (MB = 10^6).
func Bytes(b float64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.2f TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.0f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// Advice is candidates ranked.
type Advice struct {
	Predictions []*Prediction // in the order given; the first is the baseline
}

// Advise predicts w on every candidate.
func Advise(w *Workload, candidates []*Cluster, years, kwhPrice float64) (*Advice, error) {
	a := &Advice{}
	for _, c := range candidates {
		p, err := Predict(w, c, years, kwhPrice)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		a.Predictions = append(a.Predictions, p)
	}
	return a, nil
}

// Print ranks the candidates by cost per run and by runtime, then says
// for each what bounds its slowest job's longest phase and its speed-up
// over the baseline.
func (a *Advice) Print(w io.Writer) {
	if len(a.Predictions) == 0 {
		return
	}
	base := a.Predictions[0]
	byCost := append([]*Prediction(nil), a.Predictions...)
	sort.SliceStable(byCost, func(i, k int) bool { return byCost[i].TotalCostPerJob < byCost[k].TotalCostPerJob })
	tw := newTable(w)
	fmt.Fprintln(tw, "rank\tcluster\truntime (s)\tspeed-up\tprice ($)\t$/run\tkWh/run\t$/run with energy\twhat bounds it\t")
	for i, p := range byCost {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2fx\t%.0f\t%.5f\t%.4f\t%.5f\t%s\t\n", i+1, p.Cluster.Name, p.Runtime, base.Runtime/p.Runtime,
			p.Cluster.Price, p.CostPerJob, p.KWhPerJob, p.TotalCostPerJob, p.Dominant())
	}
	tw.Flush()
	fast := append([]*Prediction(nil), a.Predictions...)
	sort.SliceStable(fast, func(i, k int) bool { return fast[i].Runtime < fast[k].Runtime })
	fmt.Fprintf(w, "Cheapest per run: %s (%s). Fastest: %s, %.2fx the baseline %s.\n",
		byCost[0].Cluster.Name, byCost[0].Dominant(), fast[0].Cluster.Name, base.Runtime/fast[0].Runtime, base.Cluster.Name)
	for _, p := range a.Predictions[1:] {
		fmt.Fprintf(w, "  %s against %s: %s\n", p.Cluster.Name, base.Cluster.Name, explain(base, p))
	}
}

// Dominant names the phase that takes longest in the workload's total
// and what bounds it, with its share of the runtime.
func (p *Prediction) Dominant() string {
	var best string
	var bt float64
	for _, j := range p.Jobs {
		if !j.inTotal {
			continue
		}
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
			if v := j.Phases.Get(ph); v > bt {
				bt, best = v, fmt.Sprintf("%s %s phase, %s-bound", j.Name, ph, j.Bounds[ph])
			}
		}
	}
	if p.Runtime > 0 {
		best += fmt.Sprintf(", %.0f%% of the runtime", 100*bt/p.Runtime)
	}
	return best
}

// explain says how each total job's phases change from base to p and
// why: the bound in each.
func explain(base, p *Prediction) string {
	var parts []string
	for i, j := range p.Jobs {
		if !j.inTotal || i >= len(base.Jobs) {
			continue
		}
		b := base.Jobs[i]
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
			bv, v := b.Phases.Get(ph), j.Phases.Get(ph)
			if bv < 0.05*base.Runtime || v <= 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s %.2f -> %.2f s (%.1fx; %s-bound -> %s-bound)", j.Name, ph, bv, v, bv/v, b.Bounds[ph], j.Bounds[ph]))
		}
	}
	return fmt.Sprintf("%.2fx overall; ", base.Runtime/p.Runtime) + strings.Join(parts, "; ")
}

// PrintWorkload prints a workload's demands per job.
func PrintWorkload(w io.Writer, wl *Workload) {
	cl := wl.Calibration
	fmt.Fprintf(w, "Calibrated on %s: %d nodes, %s of data (%s)\n", cl.Name, cl.Nodes, Bytes(float64(cl.DataBytes)), wl.Source)
	tw := newTable(w)
	fmt.Fprintln(tw, "job\tdata\tmaps\treduces\tmap CPU (s/GB)\treduce CPU (s/GB)\tHDFS read\tHDFS written\tFILE read\tFILE written\tshuffled\tbytes/request\tseeking\toverhead (s)\t")
	for _, j := range wl.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d (%s)\t%d (%s)\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%.0f%%\t%.2f\t\n", j.Name, Bytes(j.Bytes),
			j.Maps, j.MapsRule, j.Reduces, j.ReducesRule, j.MapCPU*1e9, j.ReduceCPU*1e9,
			j.MapHDFSRead+j.ReduceHDFSRead, j.MapHDFSWrite+j.ReduceHDFSWrite, j.MapFileRead+j.ReduceFileRead, j.MapFileWrite+j.ReduceFileWrite,
			j.ShuffleBytes, Bytes(j.BytesPerRequest), 100*j.SeekFraction, j.Overhead)
	}
	tw.Flush()
	fmt.Fprintln(w, "(bytes per byte of the job's data; HDFS written before replication)")
}
