package media

import (
	"fmt"
	"sort"
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
}

// Presets returns the built-in device models, in the order hdd-7200,
// sata-ssd, nvme, ram.
func Presets() []Preset {
	return append([]Preset(nil), presets...)
}

// LookupPreset returns the built-in preset called name.
func LookupPreset(name string) (Preset, bool) {
	for _, p := range presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

func presetNames() string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
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
