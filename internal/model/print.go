package model

import (
	"fmt"
	"io"
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
	switch {
	case cl.SharedCores > 0:
		cpu = fmt.Sprintf("%g cores shared at %gx", cl.SharedCores, cl.Speed)
	case cl.quota():
		cpu = fmt.Sprintf("%g cores as a quota per %g ms at %gx", cl.Cores, cl.CPUPeriodMs, cl.Speed)
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
