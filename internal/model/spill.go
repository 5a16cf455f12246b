package model

import (
	"math"

	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/spill"
)

// Map-side spills. A map collects its output in mapreduce.task.io.sort.mb
// of memory, record bytes and 24 bytes of metadata each (spill.Collector),
// spills whenever the buffer is spill-percent full, and merges more than
// one spill, io.sort.factor at a time (spill.Merge's passes), into its
// output file. So a map's intermediate-file traffic is not a constant per
// byte: a larger buffer spills less often, a map with more spills merges
// in more passes, and a combiner with few distinct keys writes about as
// many records a spill whatever the spill's size (wordcount: its
// vocabulary). The model keeps the calibration's measured traffic and
// scales it by what this arithmetic gives on the predicted cluster over
// what it gives at calibration.

// spillMetaBytes is the sort buffer's metadata per record.
const spillMetaBytes = 24

// Spill is a job's map output as the spill arithmetic needs it.
type Spill struct {
	// OutBytes is the maps' output (MAP_OUTPUT_BYTES) per byte of data,
	// RecordBytes its bytes per record.
	OutBytes    float64 `json:"map_output_bytes"`
	RecordBytes float64 `json:"record_bytes"`
	// Keys is how many distinct keys the combiner's records are drawn
	// from, estimated from its records in and out per spill as if keys
	// were drawn uniformly; 0: no combiner, or one that keeps about every
	// record (a spill's output in proportion to its input).
	Keys float64 `json:"combine_keys,omitempty"`
	// SortMB is the calibration's mapreduce.task.io.sort.mb; Spills its
	// measured spills per map (for reference). Scaled says that buffer
	// was strata experiment's for the calibration's data
	// (experiment.TeraSortMB), so a cluster with other data and no
	// buffer of its own gets that rule's buffer for its data.
	SortMB float64 `json:"sort_mb"`
	Spills float64 `json:"spills_per_map"`
	Scaled bool    `json:"scaled,omitempty"`
}

// spillOf is ja's spill figures for d bytes of data over maps on cl, nil
// when its maps did not spill through a sort buffer (no reduces, no
// output or no sort buffer recorded).
func spillOf(cl *Cluster, ja *experiment.JobAccounting, d float64, maps int) *Spill {
	c := ja.Counters
	out, recs, spills := float64(c["MAP_OUTPUT_BYTES"]), float64(c["MAP_OUTPUT_RECORDS"]), float64(c["SPILLS"])
	if ja.SortMB <= 0 || out <= 0 || recs <= 0 || spills <= 0 || maps <= 0 || d <= 0 {
		return nil
	}
	s := &Spill{OutBytes: out / d, RecordBytes: out / recs, SortMB: float64(ja.SortMB), Spills: spills / float64(maps)}
	s.Scaled = cl.DataBytes > 0 && ja.SortMB == scaledSortMB(cl, cl.DataBytes)
	if in, kept := float64(c["COMBINE_INPUT_RECORDS"]), float64(c["COMBINE_OUTPUT_RECORDS"]); in > 0 && kept > 0 && kept < 0.9*in {
		// The combined records per spill against the records per spill
		// (the final merge's combining is counted too; with many
		// spills it is a small part).
		s.Keys = distinctKeys(recs/spills, kept/spills)
	}
	return s
}

// combined is how many records a combiner keeps of n drawn uniformly
// from keys distinct keys (keys 0: all of them).
func combined(n, keys float64) float64 {
	if keys <= 0 {
		return n
	}
	return keys * -math.Expm1(-n/keys)
}

// distinctKeys solves combined(in, k) = out for k, out < in.
func distinctKeys(in, out float64) float64 {
	lo, hi := out, out*1e6
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if combined(in, mid) < out {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// mergePasses runs spill.Merge's intermediate passes (spill.MergePasses)
// over n equal spills, in spills, calling pass with each pass's inputs;
// it returns the inputs of the final pass, which streams into the output.
func mergePasses(n int, pass func(in []float64)) []float64 {
	list := make([]float64, n)
	for i := range list {
		list[i] = 1
	}
	last, _, _ := spill.MergePasses(list, spill.DefaultSortFactor, func(in []float64) (float64, error) {
		pass(in)
		t := 0.0
		for _, x := range in {
			t += x
		}
		return t, nil
	})
	return last
}

// mergeSegments is how many spill-sized segments the intermediate passes
// over n spills write (and read back).
func mergeSegments(n int) float64 {
	t := 0.0
	mergePasses(n, func(in []float64) {
		for _, x := range in {
			t += x
		}
	})
	return t
}

// spillIO is one map's intermediate-file traffic: bytes written and
// read, and the requests an emulated device charges for them (it
// gathers a file's contiguous reads and writes into extents of up to
// media.DefaultRequestBytes, docs/MEDIA.md): the extents written and
// read, and the seeks — one per file written (its extents follow each
// other) and one per extent read (a merge reads its inputs in turn).
type spillIO struct {
	w, r               float64
	wExtents, rExtents float64
	files              float64
}

func (io spillIO) seeks() float64 { return io.files + io.rExtents }

// traffic is one map's intermediate-file traffic for out bytes of map
// output with a sortMB buffer: its spills, the merge's intermediate
// segments, and the merged output file (combined again when there are
// enough spills).
func (s *Spill) traffic(out, sortMB float64) spillIO {
	var io spillIO
	if out <= 0 || s.RecordBytes <= 0 || sortMB <= 0 {
		return io
	}
	ext := func(b float64) float64 { return math.Ceil(b/media.DefaultRequestBytes - 1e-9) }
	write := func(b float64) { io.w += b; io.wExtents += ext(b); io.files++ }
	read := func(b float64) { io.r += b; io.rExtents += ext(b) }
	fill := sortMB * (1 << 20) * spill.DefaultSpillPercent * s.RecordBytes / (s.RecordBytes + spillMetaBytes)
	n := max(1, int(math.Ceil(out/fill-1e-9)))
	recs := out / s.RecordBytes
	seg := combined(recs/float64(n), s.Keys) * s.RecordBytes
	for range n {
		write(seg)
	}
	if n == 1 {
		return io
	}
	last := mergePasses(n, func(in []float64) {
		t := 0.0
		for _, x := range in {
			read(x * seg)
			t += x
		}
		write(t * seg)
	})
	for _, in := range last {
		read(in * seg)
	}
	final := float64(n) * seg
	if s.Keys > 0 && n >= spill.MinSpillsForCombine {
		final = combined(recs, s.Keys) * s.RecordBytes
	}
	write(final)
	return io
}

// spillFiles is a map phase's intermediate files as the spill
// arithmetic scales them: bytes per byte of data written and read, and
// the factors on the calibration's bytes per request and share of
// requests that seek for that data.
type spillFiles struct {
	w, r, perRequest, seekShare float64
}

// files is spillFiles for d bytes over maps with a sortMB buffer: the
// calibration's measured bytes (measW, measR, for bytes over calMaps)
// times the arithmetic's traffic per byte there over its traffic at
// calibration (a calibration without merge reads has the reads scaled
// from its writes), and its requests and seeks likewise.
func (s *Spill) files(measW, measR, d float64, maps int, sortMB, bytes float64, calMaps int) spillFiles {
	out := spillFiles{w: measW, r: measR, perRequest: 1, seekShare: 1}
	if s == nil || d <= 0 || maps <= 0 || calMaps <= 0 || bytes <= 0 {
		return out
	}
	c := s.traffic(s.OutBytes*bytes/float64(calMaps), s.SortMB)
	p := s.traffic(s.OutBytes*d/float64(maps), sortMB)
	if c.w <= 0 || p.w <= 0 {
		return out
	}
	// Per byte of data: a map's figure times the maps over the data.
	ratio := func(pv, cv float64) float64 { return pv * float64(maps) / d / (cv * float64(calMaps) / bytes) }
	out.w = measW * ratio(p.w, c.w)
	switch {
	case c.r > 0:
		out.r = measR * ratio(p.r, c.r)
	case p.r > 0:
		out.r = measW * ratio(p.r, c.w)
	}
	// Requests per byte and seeks per request, against the calibration's.
	cReq, pReq := c.wExtents+c.rExtents, p.wExtents+p.rExtents
	out.perRequest = ((p.w + p.r) / pReq) / ((c.w + c.r) / cReq)
	out.seekShare = (p.seeks() / pReq) / (c.seeks() / cReq)
	return out
}

// scaledSortMB is strata experiment's sort buffer on cl for a TeraSort of
// data bytes.
func scaledSortMB(cl *Cluster, data int64) int {
	return experiment.TeraSortMB(uint64(data/100), cl.Nodes*cl.MapSlots, cl.BlockSize)
}

// sortMBOn is the job's sort buffer on cl: the cluster's, else the
// experiment's rule for its data when the calibration's followed it,
// else the calibration's.
func (j *Job) sortMBOn(cl *Cluster) float64 {
	switch {
	case cl.SortMB > 0:
		return float64(cl.SortMB)
	case j.Spill != nil && j.Spill.Scaled && cl.DataBytes > 0:
		return float64(scaledSortMB(cl, cl.DataBytes))
	case j.Spill != nil:
		return j.Spill.SortMB
	}
	return 0
}
