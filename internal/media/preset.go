package media

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Params is a device model: what one request of n bytes costs.
//
// A request occupies one of QueueDepth service slots for Latency (plus
// Seek when it does not continue where the device's previous request
// ended), then the device's single transfer channel for n / bandwidth.
// So a single stream of requests of n bytes runs at
// n / (Latency + n/bandwidth) bytes a second, random requests at QD 1 at
// 1 / (Latency + Seek + n/bandwidth) a second, and QueueDepth concurrent
// random requests at QueueDepth times that, up to the channel's
// bandwidth / n. A bandwidth of 0 means unlimited; a device whose
// bandwidths are both 0 and whose Latency and Seek are 0 costs nothing.
type Params struct {
	// ReadMBps and WriteMBps are the sequential bandwidths, in MB/s
	// (10^6 bytes a second, as data sheets count); 0 is unlimited.
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
	// Latency is what every request costs before its transfer: command
	// overhead on a disk, the flash access time on an SSD.
	Latency time.Duration `json:"latency"`
	// Seek is added to Latency when the request does not continue the
	// device's previous request (another file, or another offset): on a
	// disk the average seek plus half a revolution; 0 on flash.
	Seek time.Duration `json:"seek"`
	// QueueDepth is how many requests the device works on at once: 1 for
	// a disk's single actuator; for flash its internal parallelism (the
	// data sheet's high-queue-depth IOPS over its QD1 IOPS), which is
	// what the protocol's queue of 32 or more buys.
	QueueDepth int `json:"queue_depth"`
}

// Preset is a named, documented device model.
type Preset struct {
	Name   string
	Params Params
	Source string // where the parameters come from
}

// presets are the built-in device models; docs/MEDIA.md gives their
// sources in full.
var presets = []Preset{
	{
		Name: "hdd-7200",
		Params: Params{
			ReadMBps: 175, WriteMBps: 175,
			Seek:       8500*time.Microsecond + 4160*time.Microsecond,
			QueueDepth: 1,
		},
		Source: "Seagate Constellation ES.3 (7200 rpm SATA) data sheet: 175 MB/s sustained, 8.5 ms average read seek, 4.16 ms average rotational latency",
	},
	{
		Name: "sata-ssd",
		Params: Params{
			ReadMBps: 550, WriteMBps: 520,
			Latency:    92 * time.Microsecond,
			QueueDepth: 10,
		},
		Source: "Samsung 860 EVO (SATA 6 Gb/s) data sheet: 550/520 MB/s sequential read/write, 10,000 IOPS random 4 KiB read at QD1, 98,000 at QD32",
	},
	{
		Name: "nvme",
		Params: Params{
			ReadMBps: 3500, WriteMBps: 3300,
			Latency:    51 * time.Microsecond,
			QueueDepth: 32,
		},
		Source: "Samsung 970 EVO Plus (NVMe PCIe 3.0 x4) data sheet: 3,500/3,300 MB/s sequential read/write, 19,000 IOPS random 4 KiB read at QD1, 600,000 at QD32",
	},
	{
		Name:   "ram",
		Params: Params{QueueDepth: 1},
		Source: "memory (HDFS's RAM_DISK, a tmpfs): no cost is added; the directory runs at the machine's own speed",
	},
	// The papers' devices (issue 15); docs/MEDIA.md says which figures are
	// the data sheets' and which are estimates.
	{
		Name: "sas-15k",
		Params: Params{
			ReadMBps: 163, WriteMBps: 163,
			Seek:       3400*time.Microsecond + 2000*time.Microsecond,
			QueueDepth: 1,
		},
		Source: "Seagate Cheetah 15K.7 (15,000 rpm SAS) data sheet: 122-204 MB/s sustained (163, the mean of the outer and inner zones), 3.4 ms average read seek, 2.0 ms average rotational latency",
	},
	{
		Name: "cloudspeed-ssd",
		Params: Params{
			ReadMBps: 450, WriteMBps: 400,
			Latency:    100 * time.Microsecond,
			QueueDepth: 9,
		},
		Source: "SanDisk CloudSpeed 1000 (SATA 6 Gb/s, the SanDisk paper's SSD) specification: 450/400 MB/s sequential read/write, 80,000 random 4 KiB read IOPS at high queue depth; QD1 latency 100 us estimated (not in the specification), queue depth 80,000 over the model's QD1 rate, rounded",
	},
	{
		Name: "spinpoint-f1",
		Params: Params{
			ReadMBps: 100, WriteMBps: 100,
			Seek:       8900*time.Microsecond + 4170*time.Microsecond,
			QueueDepth: 1,
		},
		Source: "Samsung Spinpoint F1 HD103UJ (7200 rpm SATA, the Amdahl blades' disk) data sheet: 8.9 ms average seek, 4.17 ms average rotational latency; 100 MB/s sustained is an estimate across the platter (reviews measured about 115 outer, 60 inner)",
	},
	{
		Name: "vertex",
		Params: Params{
			ReadMBps: 250, WriteMBps: 160,
			Latency:    200 * time.Microsecond,
			QueueDepth: 1,
		},
		Source: "OCZ Vertex 120 GB (Indilinx Barefoot, SATA 3 Gb/s, the Amdahl blades' SSD) data sheet: up to 250/160 MB/s sequential read/write; 200 us per 4 KiB random read and no internal parallelism are estimates for that first-generation controller",
	},
}

// raid0Prefix names a RAID0 of identical devices: raid0-<n>-<preset>,
// e.g. raid0-2-vertex, the Amdahl blades' two striped SSDs.
const raid0Prefix = "raid0-"

// maxStripes bounds the devices of a RAID0 name.
const maxStripes = 16

// Striped is the model of a RAID0 of n devices of model p, a request
// striped over all of them: n times the bandwidth (every member
// transfers its share at once), n times the parallelism (small random
// requests land on different members), the same per-request latency and
// seek (the members position in parallel; the slowest is not modelled).
func (p Params) Striped(n int) Params {
	p.ReadMBps *= float64(n)
	p.WriteMBps *= float64(n)
	p.QueueDepth = min(p.QueueDepth*n, maxQueueDepth)
	return p
}

// parseRAID0 splits a raid0-<n>-<preset> name.
func parseRAID0(name string) (n int, base string, ok bool) {
	rest, found := strings.CutPrefix(name, raid0Prefix)
	if !found {
		return 0, "", false
	}
	num, base, found := strings.Cut(rest, "-")
	n, err := strconv.Atoi(num)
	if !found || err != nil || n < 2 || n > maxStripes || base == "" {
		return 0, "", false
	}
	return n, base, true
}

// resolve finds name among ps: a preset, or raid0-<n>-<preset> of one
// (striped from the preset's parameters, overrides included).
func resolve(ps []Preset, name string) (Preset, bool) {
	if i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name }); i >= 0 {
		return ps[i], true
	}
	n, base, ok := parseRAID0(name)
	if !ok {
		return Preset{}, false
	}
	i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == base })
	if i < 0 {
		return Preset{}, false
	}
	b := ps[i]
	return Preset{Name: name, Params: b.Params.Striped(n), Source: fmt.Sprintf("RAID0 of %d x %s, striped (Params.Striped): %s", n, base, b.Source)}, true
}

// Presets returns the built-in device models, in the order hdd-7200,
// sata-ssd, nvme, ram, then the papers' sas-15k, cloudspeed-ssd,
// spinpoint-f1 and vertex. A RAID0 of any of them is named
// raid0-<n>-<preset> (LookupPreset, strata.media.dirs).
func Presets() []Preset {
	return append([]Preset(nil), presets...)
}

// LookupPreset returns the built-in preset called name, or the RAID0
// raid0-<n>-<preset> of one (2 to 16 devices).
func LookupPreset(name string) (Preset, bool) {
	return resolve(presets, name)
}

func presetNames() string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ") + " or raid0-<n>-<preset>"
}

// Bandwidths a model may have, in MB/s (besides 0, unlimited).
const minMBps, maxMBps = 1e-3, 1e9

// Validate reports whether p is a usable model.
func (p Params) Validate() error {
	for _, bw := range []float64{p.ReadMBps, p.WriteMBps} {
		// Below minMBps a request's transfer time overflows.
		if bw != 0 && !(bw >= minMBps && bw <= maxMBps) {
			return fmt.Errorf("bandwidth %v MB/s out of range: 0 (unlimited) or [%v, %v]", bw, minMBps, maxMBps)
		}
	}
	switch {
	case p.Latency < 0 || p.Seek < 0:
		return fmt.Errorf("latency and seek must not be negative")
	case p.Latency > maxBacklog || p.Seek > maxBacklog:
		return fmt.Errorf("latency and seek must be at most %v", maxBacklog)
	case p.QueueDepth < 1 || p.QueueDepth > maxQueueDepth:
		return fmt.Errorf("queue depth %d out of range [1, %d]", p.QueueDepth, maxQueueDepth)
	}
	return nil
}

// free reports whether the model costs nothing.
func (p Params) free() bool {
	return p.ReadMBps == 0 && p.WriteMBps == 0 && p.Latency == 0 && p.Seek == 0
}

// transfer is the channel time of n bytes.
func (p Params) transfer(n int64, write bool) time.Duration {
	bw := p.ReadMBps
	if write {
		bw = p.WriteMBps
	}
	if bw <= 0 {
		return 0
	}
	return time.Duration(float64(n) / (bw * 1e6) * float64(time.Second))
}

// SequentialMBps is the model's throughput, in MB/s, of one stream of
// contiguous requests of reqBytes each; 0 means unlimited.
func (p Params) SequentialMBps(reqBytes int64, write bool) float64 {
	t := p.Latency + p.transfer(reqBytes, write)
	if t <= 0 {
		return 0
	}
	return float64(reqBytes) / t.Seconds() / 1e6
}

// RandomIOPS is the model's rate of random (never contiguous) reads of n
// bytes issued by qd concurrent streams; 0 means unlimited.
func (p Params) RandomIOPS(n int64, qd int) float64 {
	per := p.Latency + p.Seek + p.transfer(n, false)
	if per <= 0 {
		return 0
	}
	par := min(qd, p.QueueDepth)
	iops := float64(par) / per.Seconds()
	if x := p.transfer(n, false); x > 0 {
		iops = min(iops, 1/x.Seconds())
	}
	return iops
}

// sortedPresetKeys lists the per-preset override suffixes, for messages.
func overrideSuffixes() string {
	s := []string{"read.mbps", "write.mbps", "latency", "seek", "queue.depth"}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
