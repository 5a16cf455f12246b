package experiment

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/vfs"
)

// RealDisk names the real file system's disk in Figure 1's rows.
const RealDisk = "real disk"

// DefaultFig1Devices are Figure 1's devices: the blade's magnetic disk,
// its SSD, RAID0 over its two disks, and this machine's disk.
var DefaultFig1Devices = []string{"spinpoint-f1", "vertex", "raid0-2-spinpoint-f1", RealDisk}

// Fig1Row is one measurement of Figure 1: a device, write or read,
// buffered or direct (O_DIRECT).
type Fig1Row struct {
	Device string  `json:"device"`
	Op     string  `json:"op"`   // write, read
	Mode   string  `json:"mode"` // buffered, direct
	Bytes  int64   `json:"bytes"`
	Secs   float64 `json:"seconds"`
	MBps   float64 `json:"mb_per_s"`
	// DDMBps is dd's rate for the same operation in the same run (real
	// disk only: dd does not go through the emulation), 0 if none.
	DDMBps float64 `json:"dd_mb_per_s,omitempty"`
	// ProcCPU is the benchmark's user+system CPU time over the wall time
	// (1 = one CPU busy); KworkerCPU the same for the kernel's kworker
	// threads (writeback runs in them; so does other kernel work on this
	// machine); SystemCPU the whole machine's busy CPU from /proc/stat.
	ProcCPU    float64 `json:"process_cpu"`
	KworkerCPU float64 `json:"kworker_cpu"`
	SystemCPU  float64 `json:"system_cpu"`
}

// Fig1Options configure Figure 1's benchmark: Files files of FileBytes
// each per operation, written and read in 1 MiB requests by one thread,
// as the paper's 64 MB × 100 files.
type Fig1Options struct {
	Dir       string
	Devices   []string
	FileBytes int64
	Files     int
	// DD runs dd beside the real disk's measurements.
	DD bool
}

const fig1Request = 1 << 20

// RunFig1 runs Figure 1's benchmark on each device: an emulated preset
// (a directory under Dir through package media) or RealDisk (a plain
// directory under Dir).
func RunFig1(ctx context.Context, o Fig1Options, progress *Progress) ([]Fig1Row, error) {
	if o.Files < 1 || o.FileBytes < fig1Request || o.FileBytes%fig1Request != 0 {
		return nil, fmt.Errorf("figure 1: want at least one file of a whole number of MiB, got %d × %d bytes", o.Files, o.FileBytes)
	}
	buf, err := syscall.Mmap(-1, 0, fig1Request, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("figure 1: aligned buffer: %w", err)
	}
	defer syscall.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i*7 + i>>12)
	}
	var rows []Fig1Row
	for _, dev := range o.Devices {
		dir, err := filepath.Abs(filepath.Join(o.Dir, strings.ReplaceAll(dev, " ", "-")))
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		fsys := vfs.Default
		if dev != RealDisk {
			p, ok := media.LookupPreset(dev)
			if !ok {
				return nil, fmt.Errorf("figure 1: unknown media preset %q", dev)
			}
			m, err := media.New(nil, &media.Table{Devices: []media.Device{{Dir: dir, Preset: dev, Params: p.Params}}, RequestBytes: fig1Request})
			if err != nil {
				return nil, err
			}
			fsys = m
		}
		for _, mode := range []string{"buffered", "direct"} {
			for _, op := range []string{"write", "read"} {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				progress.Begin(fmt.Sprintf("  figure 1: %s %s %s", dev, mode, op))
				row, err := fig1Run(fsys, dir, dev, op, mode, o, buf)
				if err != nil {
					progress.End("failed")
					return nil, fmt.Errorf("figure 1: %s %s %s: %w", dev, mode, op, err)
				}
				if o.DD && dev == RealDisk {
					row.DDMBps, err = ddRate(ctx, dir, op, mode, o.FileBytes)
					if err != nil {
						progress.Logf("  figure 1: dd: %v", err)
					}
				}
				progress.End(fmt.Sprintf("%.0f MB/s", row.MBps))
				rows = append(rows, row)
			}
		}
		os.RemoveAll(dir)
	}
	return rows, nil
}

// fig1Run writes or reads the files once and measures it.
func fig1Run(fsys vfs.FS, dir, dev, op, mode string, o Fig1Options, buf []byte) (Fig1Row, error) {
	row := Fig1Row{Device: dev, Op: op, Mode: mode}
	flag := os.O_RDONLY
	if op == "write" {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	if mode == "direct" {
		flag |= syscall.O_DIRECT
	}
	name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f%03d", i)) }
	if op == "read" {
		// Buffered reads come from the disk, not the cache the writes left.
		for i := 0; i < o.Files; i++ {
			if err := dropCache(name(i)); err != nil {
				return row, err
			}
		}
	}
	before := cpuSnapshot()
	start := time.Now()
	for i := 0; i < o.Files; i++ {
		f, err := fsys.OpenFile(name(i), flag, 0o644)
		if err != nil {
			return row, err
		}
		for n := int64(0); n < o.FileBytes; n += fig1Request {
			var k int
			if op == "write" {
				k, err = f.Write(buf)
			} else {
				k, err = io.ReadFull(f, buf)
			}
			row.Bytes += int64(k)
			if err != nil {
				f.Close()
				return row, err
			}
		}
		if op == "write" {
			// The writeback is part of a buffered write's cost: the file is
			// on the disk before the next one starts (HDFS's block files
			// are, when the block is finalized).
			if err := f.Sync(); err != nil {
				f.Close()
				return row, err
			}
		}
		if err := f.Close(); err != nil {
			return row, err
		}
	}
	row.Secs = time.Since(start).Seconds()
	d := cpuSnapshot().sub(before)
	row.MBps = float64(row.Bytes) / 1e6 / row.Secs
	row.ProcCPU, row.KworkerCPU, row.SystemCPU = d.proc/row.Secs, d.kworker/row.Secs, d.system/row.Secs
	return row, nil
}

// dropCache writes back and drops a file's cached pages.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// cpuTimes are CPU seconds: this process's, the kworker threads' and
// the machine's.
type cpuTimes struct {
	proc, system float64
	kworkers     map[int]float64
	kworker      float64
}

func cpuSnapshot() cpuTimes {
	var t cpuTimes
	if c, err := procstat.Self(); err == nil {
		t.proc = c.Total().Seconds()
	}
	t.system = systemBusy()
	t.kworkers = kworkerCPU()
	return t
}

// sub is t − o; the kworkers' time counts those present in both.
func (t cpuTimes) sub(o cpuTimes) cpuTimes {
	d := cpuTimes{proc: t.proc - o.proc, system: t.system - o.system}
	for pid, s := range t.kworkers {
		if b, ok := o.kworkers[pid]; ok && s >= b {
			d.kworker += s - b
		}
	}
	return d
}

// kworkerCPU is the CPU seconds of each kernel worker thread (comm
// kworker/... or flush-..., the writeback threads of older kernels).
func kworkerCPU() map[int]float64 {
	out := map[int]float64{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || !(bytes.HasPrefix(comm, []byte("kworker")) || bytes.HasPrefix(comm, []byte("flush-"))) {
			continue
		}
		if c, err := procstat.PID(pid); err == nil {
			out[pid] = c.Total().Seconds()
		}
	}
	return out
}

// systemBusy is the machine's busy CPU seconds from /proc/stat's cpu
// line (user, nice, system, irq, softirq, steal), 0 where unreadable.
func systemBusy() float64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	return parseCPULine(sc.Text())
}

func parseCPULine(line string) float64 {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	busy := 0.0
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0
		}
		busy += v
	}
	return busy / 100 // USER_HZ
}

var ddCopied = regexp.MustCompile(`(\d+) bytes .* copied, ([0-9.]+) s`)

// ddRate runs dd for one file of the operation and mode and returns its
// rate in MB/s.
func ddRate(ctx context.Context, dir, op, mode string, size int64) (float64, error) {
	path := filepath.Join(dir, "dd-ref")
	count := strconv.FormatInt(size/fig1Request, 10)
	var args []string
	switch op {
	case "write":
		args = []string{"if=/dev/zero", "of=" + path, "bs=1M", "count=" + count}
		if mode == "direct" {
			args = append(args, "oflag=direct")
		} else {
			args = append(args, "conv=fsync")
		}
	default:
		if err := dropCache(path); err != nil {
			return 0, err
		}
		args = []string{"if=" + path, "of=/dev/null", "bs=1M"}
		if mode == "direct" {
			args = append(args, "iflag=direct")
		}
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "dd", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("dd %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	m := ddCopied.FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, errors.New("dd: no rate in " + strings.TrimSpace(stderr.String()))
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	s, _ := strconv.ParseFloat(m[2], 64)
	if s <= 0 {
		return 0, nil
	}
	return n / 1e6 / s, nil
}

// fig1Tables are Figure 1's measurements and its direct-over-buffered
// ratios beside the paper's findings.
func (r *Paper3Results) fig1Tables() []Paper3Table {
	m := Paper3Table{Title: "Figure 1: sequential I/O, buffered vs direct (O_DIRECT), one thread, 1 MiB requests",
		Header: []string{"device", "op", "mode", "strata MB/s", "dd MB/s", "process CPU", "kworker CPU", "machine CPU"}, file: "paper3-figure1.csv"}
	for _, row := range r.Fig1 {
		m.Rows = append(m.Rows, []string{row.Device, row.Op, row.Mode, p3cell(row.MBps, 0), p3cell(row.DDMBps, 0),
			pct(row.ProcCPU), pct(row.KworkerCPU), pct(row.SystemCPU)})
	}
	m.Note = "CPU over the wall time (100% = one CPU): the benchmark process's user+system; the kernel's kworker threads " +
		"(writeback runs there, as does other kernel work on this shared machine); the whole machine's from /proc/stat. " +
		"Buffered writes end each file with fsync. The seed text gives Figure 1's findings, not its values."
	s := Paper3Table{Title: "Figure 1: direct over buffered", Header: []string{"device", "op", "MB/s ratio", "CPU ratio", "paper", "agrees"},
		file: "paper3-figure1-ratios.csv"}
	find := func(dev, op, mode string) *Fig1Row {
		for i := range r.Fig1 {
			if x := &r.Fig1[i]; x.Device == dev && x.Op == op && x.Mode == mode {
				return x
			}
		}
		return nil
	}
	seen := map[string]bool{}
	for _, row := range r.Fig1 {
		k := row.Device + "/" + row.Op
		if seen[k] {
			continue
		}
		seen[k] = true
		b, d := find(row.Device, row.Op, "buffered"), find(row.Device, row.Op, "direct")
		if b == nil || d == nil {
			continue
		}
		mb := ratio2(d.MBps, b.MBps)
		cpu := ratio2(d.ProcCPU+d.KworkerCPU, b.ProcCPU+b.KworkerCPU)
		paper, agrees := "direct faster, far less CPU", mb >= 0.95 && cpu < 1
		if row.Op == "read" {
			paper, agrees = "little difference", mb >= 0.8 && mb <= 1.25
		}
		verdict := map[bool]string{true: "yes", false: "no"}[agrees]
		if row.Device != RealDisk {
			// The emulation charges both modes the model's time (it has no
			// page cache): only the CPU, the real kernel's, can differ.
			verdict = "n/a (emulated rate)"
			if row.Op == "write" {
				verdict = map[bool]string{true: "CPU yes", false: "CPU no"}[cpu < 1]
			}
		}
		s.Rows = append(s.Rows, []string{row.Device, row.Op, p3cell(mb, 2), p3cell(cpu, 2), paper, verdict})
	}
	s.Note = "CPU ratio: (process + kworker CPU) direct over buffered. On the real disk writes agree when direct is not slower (within 5%) and costs less CPU, " +
		"reads when within 0.8–1.25×; an emulated device's rate is its model's in both modes, so only its write CPU is judged."
	return []Paper3Table{m, s}
}

func (r *Paper3Results) fig1Charts() []namedChart {
	if len(r.Fig1) == 0 {
		return nil
	}
	tp := &Chart{Title: "Figure 1: sequential throughput, buffered vs direct", YLabel: "MB/s", Series: []string{"buffered", "direct"}}
	cpu := &Chart{Title: "Figure 1: CPU (process + kworkers), buffered vs direct", YLabel: "% of one CPU", Series: []string{"buffered", "direct"}}
	idx := map[string]int{}
	for _, row := range r.Fig1 {
		g := row.Device + " " + row.Op
		if _, ok := idx[g]; !ok {
			idx[g] = len(tp.Groups)
			tp.Groups, cpu.Groups = append(tp.Groups, g), append(cpu.Groups, g)
		}
	}
	tp.Values = [][]float64{nanSlice(len(tp.Groups)), nanSlice(len(tp.Groups))}
	cpu.Values = [][]float64{nanSlice(len(tp.Groups)), nanSlice(len(tp.Groups))}
	for _, row := range r.Fig1 {
		s := 0
		if row.Mode == "direct" {
			s = 1
		}
		g := idx[row.Device+" "+row.Op]
		tp.Values[s][g], cpu.Values[s][g] = row.MBps, 100*(row.ProcCPU+row.KworkerCPU)
	}
	return []namedChart{{file: "paper3-figure1.svg", chart: tp}, {file: "paper3-figure1-cpu.svg", chart: cpu}}
}

func nanSlice(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}
