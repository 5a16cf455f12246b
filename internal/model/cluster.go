package model

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/media"
)

// Cluster is a described cluster: what a prediction runs on.
// docs/format/model-cluster.md is its file format.
type Cluster struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Nodes       int    `json:"nodes"`
	// Cores per node and their speed relative to the calibration
	// machine's (1: as fast; 0.5: a core does half the work a second).
	Cores float64 `json:"node_cores,omitempty"`
	Speed float64 `json:"node_speed"`
	// SharedCores, if > 0, is a pool of cores all nodes draw from (an
	// emulated cluster on one machine); Cores is then ignored.
	SharedCores float64 `json:"cpu_shared,omitempty"`
	// CPUPeriodMs, if > 0, says Cores is a CFS bandwidth quota (a
	// container's CPU limit; the emulated hosts' cgroups) renewed every
	// this many ms: a node runs at a full core until each period's quota
	// is spent (cpuquota.go).
	CPUPeriodMs float64 `json:"cpu_quota_period_ms,omitempty"`
	// QuotaSharedCores, if > 0, is the cores the quotas' nodes all run
	// on (emulated hosts on one machine): what bounds a burst when every
	// node bursts at once. 0: each node bursts on its own cores.
	QuotaSharedCores float64 `json:"cpu_quota_shared,omitempty"`
	MapSlots         int     `json:"map_slots"`
	ReduceSlots      int     `json:"reduce_slots"`
	// LinkMbps is each node's network link in Mbit/s each way; 0 is
	// unlimited (one machine's loopback).
	LinkMbps float64 `json:"link_mbps,omitempty"`
	// Devices per node, by name; Volumes and LocalDirs name the ones
	// holding HDFS blocks and intermediate data (a device may be both).
	Devices   []Device `json:"devices"`
	Volumes   []string `json:"hdfs_volumes"`
	LocalDirs []string `json:"mapred_local_dir"`
	// Replication is dfs.replication; BlockSize dfs.blocksize.
	Replication int   `json:"dfs_replication"`
	BlockSize   int64 `json:"dfs_blocksize"`
	// DataBytes is the dataset: TeraGen's output, TeraSort's input.
	DataBytes int64 `json:"data"`
	// Price in dollars; the power model's node figures in watts (idle,
	// and the extra at full CPU), plus each device's from its preset
	// (experiment.DefaultPowerModel).
	Price float64 `json:"price,omitempty"`
	IdleW float64 `json:"node_watts_idle,omitempty"`
	CPUW  float64 `json:"node_watts_cpu,omitempty"`
	// HeartbeatMs is the TaskTrackers' heartbeat interval
	// (mapreduce.jobtracker.heartbeat.interval): a job's first maps start
	// as each tracker next heartbeats. 0 is the calibration's.
	HeartbeatMs int `json:"heartbeat_ms,omitempty"`
	// SortMB is mapreduce.task.io.sort.mb, the maps' sort buffer; 0 is
	// strata experiment's for the cluster's data when the calibration's
	// job had that rule's buffer, else the calibration's.
	SortMB int `json:"mapreduce_task_io_sort_mb,omitempty"`
}

// Device is one device of a node: a media model.
type Device struct {
	Name   string       `json:"name"`
	Preset string       `json:"preset"` // the preset's name, or "custom"
	Params media.Params `json:"params"`
}

// maxClusterFile bounds a cluster file.
const maxClusterFile = 1 << 20

var clusterName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// ParseCluster reads a cluster file; source names it in errors.
func ParseCluster(r io.Reader, source string) (*Cluster, error) {
	c := &Cluster{Speed: 1, MapSlots: 1, ReduceSlots: 1, Replication: 3, BlockSize: 128 << 20}
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(r, maxClusterFile))
	sc.Buffer(make([]byte, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("cluster %s:%d: want key = value", source, n)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			return nil, fmt.Errorf("cluster %s:%d: %s given twice", source, n, k)
		}
		seen[k] = true
		if err := c.set(k, v); err != nil {
			return nil, fmt.Errorf("cluster %s:%d: %s: %w", source, n, k, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", source, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", source, err)
	}
	return c, nil
}

func (c *Cluster) set(k, v string) error {
	num := func(lo, hi float64) (float64, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < lo || f > hi {
			return 0, fmt.Errorf("want a number in [%g, %g], got %q", lo, hi, v)
		}
		return f, nil
	}
	integer := func(lo, hi int) (int, error) {
		i, err := strconv.Atoi(v)
		if err != nil || i < lo || i > hi {
			return 0, fmt.Errorf("want an integer in [%d, %d], got %q", lo, hi, v)
		}
		return i, nil
	}
	size := func() (int64, error) {
		b, err := conf.ParseBytes(v)
		if err != nil || b <= 0 || b > 1<<60 {
			return 0, fmt.Errorf("want a size such as 1t or 500m, got %q", v)
		}
		return b, nil
	}
	var err error
	switch {
	case k == "name":
		if !clusterName.MatchString(v) {
			return fmt.Errorf("want lower-case letters, digits, '.', '-', '_', got %q", v)
		}
		c.Name = v
	case k == "description":
		c.Description = v
	case k == "nodes":
		c.Nodes, err = integer(1, 100000)
	case k == "node.cores":
		c.Cores, err = num(0.01, 4096)
	case k == "node.speed":
		c.Speed, err = num(0.001, 1000)
	case k == "cpu.shared":
		c.SharedCores, err = num(0.01, 4096)
	case k == "node.cpu.quota.period":
		d, perr := time.ParseDuration(v)
		if perr != nil || d < time.Millisecond || d > time.Second {
			return fmt.Errorf("want a duration from 1ms to 1s (the kernel's cfs_period_us range), got %q", v)
		}
		c.CPUPeriodMs = float64(d) / float64(time.Millisecond)
	case k == "cpu.quota.shared":
		c.QuotaSharedCores, err = num(0.01, 1<<20)
	case k == "map.slots":
		c.MapSlots, err = integer(1, 4096)
	case k == "reduce.slots":
		c.ReduceSlots, err = integer(1, 4096)
	case k == "link.mbps":
		c.LinkMbps, err = num(0, 1e7)
	case k == "dfs.replication":
		c.Replication, err = integer(1, 16)
	case k == "dfs.blocksize":
		c.BlockSize, err = size()
	case k == "data":
		c.DataBytes, err = size()
	case k == "price":
		c.Price, err = num(0, 1e12)
	case k == "node.watts.idle":
		c.IdleW, err = num(0, 1e6)
	case k == "node.watts.cpu":
		c.CPUW, err = num(0, 1e6)
	case k == "mapreduce.jobtracker.heartbeat.interval":
		c.HeartbeatMs, err = integer(1, 600000)
	case k == "mapreduce.task.io.sort.mb":
		c.SortMB, err = integer(1, 4096)
	case k == "hdfs.volumes":
		c.Volumes = conf.TrimmedStrings(v)
	case k == "mapred.local.dir":
		c.LocalDirs = conf.TrimmedStrings(v)
	case strings.HasPrefix(k, "device."):
		name := strings.TrimPrefix(k, "device.")
		if !clusterName.MatchString(name) {
			return fmt.Errorf("bad device name %q", name)
		}
		d, err := ParseDevice(name, v)
		if err != nil {
			return err
		}
		c.Devices = append(c.Devices, d)
	default:
		return errors.New("unknown key")
	}
	return err
}

// ParseDevice reads a device: a media preset name (hdd-7200,
// raid0-2-vertex, ...) or its parameters,
// "read=550,write=520,latency=92us,seek=0,qd=10" (MB/s, durations).
func ParseDevice(name, v string) (Device, error) {
	if p, ok := media.LookupPreset(v); ok {
		return Device{Name: name, Preset: p.Name, Params: p.Params}, nil
	}
	if !strings.Contains(v, "=") {
		return Device{}, fmt.Errorf("unknown media preset %q", v)
	}
	d := Device{Name: name, Preset: "custom", Params: media.Params{QueueDepth: 1}}
	for _, kv := range conf.TrimmedStrings(v) {
		pk, pv, _ := strings.Cut(kv, "=")
		var err error
		switch pk {
		case "read", "write":
			var f float64
			f, err = strconv.ParseFloat(pv, 64)
			if err == nil && (f < 0 || f > 1e9 || math.IsNaN(f)) {
				err = errors.New("out of range")
			}
			if pk == "read" {
				d.Params.ReadMBps = f
			} else {
				d.Params.WriteMBps = f
			}
		case "latency", "seek":
			var t time.Duration
			if pv == "0" {
				pv = "0s"
			}
			t, err = time.ParseDuration(pv)
			if err == nil && (t < 0 || t > time.Second) {
				err = errors.New("out of range [0, 1s]")
			}
			if pk == "latency" {
				d.Params.Latency = t
			} else {
				d.Params.Seek = t
			}
		case "qd":
			d.Params.QueueDepth, err = strconv.Atoi(pv)
			if err == nil && (d.Params.QueueDepth < 1 || d.Params.QueueDepth > 256) {
				err = errors.New("out of range [1, 256]")
			}
		default:
			err = errors.New("unknown parameter")
		}
		if err != nil {
			return Device{}, fmt.Errorf("device %s: %s: %v", name, kv, err)
		}
	}
	return d, nil
}

// Validate checks that the description is complete.
func (c *Cluster) Validate() error {
	if c.Name == "" {
		return errors.New("no name")
	}
	if c.Nodes < 1 {
		return errors.New("no nodes")
	}
	if c.Cores <= 0 && c.SharedCores <= 0 {
		return errors.New("neither node.cores nor cpu.shared")
	}
	if c.MapSlots < 1 || c.ReduceSlots < 1 {
		return errors.New("map.slots and reduce.slots must be at least 1")
	}
	if !(c.Speed > 0) || math.IsInf(c.Speed, 0) {
		return errors.New("node.speed must be positive")
	}
	if len(c.Devices) == 0 || len(c.Volumes) == 0 || len(c.LocalDirs) == 0 {
		return errors.New("needs devices, hdfs.volumes and mapred.local.dir")
	}
	for _, list := range [][]string{c.Volumes, c.LocalDirs} {
		for _, d := range list {
			if c.Device(d) == nil {
				return fmt.Errorf("unknown device %q (declare it with device.%s = PRESET)", d, d)
			}
		}
	}
	if c.Replication > c.Nodes {
		return fmt.Errorf("dfs.replication %d over %d nodes", c.Replication, c.Nodes)
	}
	return nil
}

// Device returns the device called name, nil if there is none.
func (c *Cluster) Device(name string) *Device {
	i := slices.IndexFunc(c.Devices, func(d Device) bool { return d.Name == name })
	if i < 0 {
		return nil
	}
	return &c.Devices[i]
}

// cpuTime is the time of a node's c CPU-seconds (the calibration
// machine's) at share cores of speed-adjusted CPU, threads of it able to
// run at once: the steady rate, or under a quota its bursts (QuotaTime).
func (c *Cluster) cpuTime(cpu, share float64, threads int) float64 {
	if !c.quota() {
		return cpu / share
	}
	rate := math.Min(math.Ceil(c.Cores), float64(threads)) * c.Speed
	if c.QuotaSharedCores > 0 {
		rate = math.Min(rate, c.QuotaSharedCores/float64(c.Nodes)*c.Speed)
	}
	return QuotaTime(cpu, share, rate, c.CPUPeriodMs/1000)
}

// quota reports whether the nodes' cores are a CPU quota.
func (c *Cluster) quota() bool { return c.CPUPeriodMs > 0 && c.SharedCores <= 0 }

// nodeCores is what one node's tasks can use when every node is busy.
func (c *Cluster) nodeCores() float64 {
	if c.SharedCores > 0 {
		return c.SharedCores / float64(c.Nodes)
	}
	return c.Cores
}

// hdfsRequestTime is the mean time of one small synchronous request on
// the node's HDFS devices (latency plus a seek), in seconds: what the
// jobs' setup and commit files cost on them.
func (c *Cluster) hdfsRequestTime() float64 {
	var sum float64
	var n int
	for _, v := range c.Volumes {
		if d := c.Device(v); d != nil {
			sum += (d.Params.Latency + d.Params.Seek).Seconds()
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// linkBytesPerSecond is a link's payload rate: TCP/IP/Ethernet framing
// of 1448 payload bytes per 1514 on the wire plus the ACKs, and HDFS's
// CRC and packet headers (docs/EXPERIMENTS.md, "The link arithmetic");
// +Inf for an unlimited link.
func (c *Cluster) linkBytesPerSecond() float64 {
	if c.LinkMbps <= 0 {
		return math.Inf(1)
	}
	return c.LinkMbps * 1e6 / 8 * linkPayload
}

const linkPayload = 0.9283
