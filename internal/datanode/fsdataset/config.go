package fsdataset

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/stratafs/strata/internal/storage"
)

// VolumeConfig is one entry of dfs.datanode.data.dir.
type VolumeConfig struct {
	// Path is the volume's directory (created if missing).
	Path string
	// Type is the volume's storage type (DISK if the entry has none).
	Type storage.Type
}

// ParseDataDirs parses dfs.datanode.data.dir: comma-separated entries, each
// an optional case-insensitive storage type in brackets followed by a
// directory, as a plain path or a file: URI, e.g.
// "[SSD]/data/ssd,[disk]file:///data/disk,/data/other". Blank entries are
// skipped; at least one entry is required.
func ParseDataDirs(s string) ([]VolumeConfig, error) {
	var out []VolumeConfig
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		vc := VolumeConfig{Type: storage.Disk}
		p := e
		if strings.HasPrefix(p, "[") {
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: missing ']' after the storage type", e)
			}
			t, err := storage.ParseType(strings.TrimSpace(p[1:end]))
			if err != nil {
				return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: %v", e, err)
			}
			vc.Type = t
			p = strings.TrimSpace(p[end+1:])
		}
		if len(p) >= 5 && strings.EqualFold(p[:5], "file:") {
			u, err := url.Parse(p)
			if err != nil {
				return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: %v", e, err)
			}
			if u.Host != "" && u.Host != "localhost" {
				return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: a file: URI must name a local path (no host %q)", e, u.Host)
			}
			p = u.Path
			if p == "" {
				p = u.Opaque // file:relative/dir
			}
		} else if i := strings.Index(p, "://"); i > 0 && !strings.ContainsAny(p[:i], `/\`) {
			return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: unsupported scheme %q (only local paths and file: URIs)", e, p[:i])
		}
		if p == "" {
			return nil, fmt.Errorf("fsdataset: dfs.datanode.data.dir entry %q: no directory", e)
		}
		vc.Path = filepath.Clean(p)
		out = append(out, vc)
	}
	if len(out) == 0 {
		return nil, errors.New("fsdataset: dfs.datanode.data.dir lists no directory")
	}
	return out, nil
}

// Volume choosing policies (Config.Choosing), as Hadoop's
// dfs.datanode.fsdataset.volume.choosing.policy.
const (
	// RoundRobin takes the volumes of the wanted type in turn, skipping
	// those without room (Hadoop's RoundRobinVolumeChoosingPolicy).
	RoundRobin = "round-robin"
	// AvailableSpace prefers volumes with more free space when the
	// volumes are unbalanced (Hadoop's AvailableSpaceVolumeChoosingPolicy).
	AvailableSpace = "available-space"
)

// Config configures a Dataset. Nothing in it can change after Open.
type Config struct {
	// Volumes are the data directories (dfs.datanode.data.dir; see
	// ParseDataDirs). Required.
	Volumes []VolumeConfig
	// FailedVolumesTolerated is how many volumes may fail before the
	// DataNode must stop (dfs.datanode.failed.volumes.tolerated; default
	// 0). -1 means "as long as one volume works". Must be < len(Volumes).
	FailedVolumesTolerated int
	// Choosing is the volume choosing policy, RoundRobin (default, "")
	// or AvailableSpace.
	Choosing string
	// AvailableSpaceThreshold: with AvailableSpace, volumes whose free
	// space differs by less than this many bytes count as balanced and
	// are used in turn
	// (dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold;
	// default 10 GiB).
	AvailableSpaceThreshold int64
	// AvailableSpacePreference is the share of new replicas that go to the
	// emptier volumes when unbalanced
	// (...balanced-space-preference-fraction; default 0.75).
	AvailableSpacePreference float64
	// BytesPerChecksum is the chunk size of new replicas
	// (dfs.bytes-per-checksum; default 512). Existing replicas keep the
	// value in their meta header.
	BytesPerChecksum int
	// Reserved is the bytes kept free on each volume for non-HDFS use
	// (dfs.datanode.du.reserved; default 0).
	Reserved int64
	// DirectIO writes replica data with O_DIRECT from aligned buffers
	// (strata.datanode.direct-io.write; default false). Where the file
	// system or platform refuses it, writes fall back to buffered I/O and
	// the fallback is logged once per volume.
	DirectIO bool
	// OnChange, if set, receives every replica change for incremental
	// block reports. It is called in the order the changes happen, with
	// the dataset's lock held: it must return quickly and must not call
	// the Dataset (append to a queue and return).
	OnChange func(ReplicaEvent)
	// FS is the file system the volumes live on; nil means OSFS (the
	// process's, media.Default()). Tests inject faults here (vfs/errorfs).
	FS FS
	// Logger receives the scan's findings, volume failures and the
	// direct-I/O fallback; nil discards.
	Logger *slog.Logger
}

// DefaultConfig returns a Config with Hadoop's defaults for the given
// volumes.
func DefaultConfig(vols []VolumeConfig) Config {
	return Config{
		Volumes:                  vols,
		Choosing:                 RoundRobin,
		AvailableSpaceThreshold:  10 << 30,
		AvailableSpacePreference: 0.75,
		BytesPerChecksum:         DefaultBytesPerChecksum,
	}
}

func (c *Config) check() error {
	if len(c.Volumes) == 0 {
		return errors.New("fsdataset: no volumes configured")
	}
	seen := map[string]bool{}
	for _, v := range c.Volumes {
		if v.Path == "" {
			return errors.New("fsdataset: a volume has an empty path")
		}
		abs, err := filepath.Abs(v.Path)
		if err != nil {
			return fmt.Errorf("fsdataset: volume %s: %v", v.Path, err)
		}
		if seen[abs] {
			return fmt.Errorf("fsdataset: volume %s is listed twice", v.Path)
		}
		seen[abs] = true
	}
	if t := c.FailedVolumesTolerated; t < -1 || t >= len(c.Volumes) {
		return fmt.Errorf("fsdataset: invalid dfs.datanode.failed.volumes.tolerated %d: must be -1 or in [0, %d) for %d volume(s)", t, len(c.Volumes), len(c.Volumes))
	}
	switch c.Choosing {
	case "":
		c.Choosing = RoundRobin
	case RoundRobin, AvailableSpace:
	default:
		return fmt.Errorf("fsdataset: unknown volume choosing policy %q (want %q or %q)", c.Choosing, RoundRobin, AvailableSpace)
	}
	if c.AvailableSpaceThreshold <= 0 {
		c.AvailableSpaceThreshold = 10 << 30
	}
	if c.AvailableSpacePreference <= 0 || c.AvailableSpacePreference > 1 {
		c.AvailableSpacePreference = 0.75
	}
	if c.BytesPerChecksum == 0 {
		c.BytesPerChecksum = DefaultBytesPerChecksum
	}
	if c.BytesPerChecksum < 0 || c.BytesPerChecksum > maxBytesPerChecksum {
		return fmt.Errorf("fsdataset: invalid bytes per checksum %d", c.BytesPerChecksum)
	}
	if c.Reserved < 0 {
		return fmt.Errorf("fsdataset: invalid reserved space %d", c.Reserved)
	}
	if c.FS == nil {
		c.FS = OSFS{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
