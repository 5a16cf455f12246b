package fsdataset

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/stratafs/strata/conf"
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

// The keys ConfigFrom reads; their defaults are in conf's table.
const (
	KeyDataDir            = "dfs.datanode.data.dir"
	KeyFailedTolerated    = "dfs.datanode.failed.volumes.tolerated"
	KeyChoosingPolicy     = "dfs.datanode.fsdataset.volume.choosing.policy"
	KeyBalancedThreshold  = "dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold"
	KeyBalancedPreference = "dfs.datanode.available-space-volume-choosing-policy.balanced-space-preference-fraction"
	KeyReserved           = "dfs.datanode.du.reserved"
	KeyDirectIO           = "strata.datanode.direct-io.write"
	KeyDropBehindWrites   = "dfs.datanode.drop.cache.behind.writes"
)

// Config configures a Dataset. Nothing in it can change after Open.
// ConfigFrom reads it from Hadoop's keys, and DefaultConfig is ConfigFrom
// of an empty configuration, so the defaults below are conf's table's.
// For a hand-built Config, Open first gives the fields marked "0 means
// the default" DefaultConfig's value, then Validate rejects what is still
// out of range.
type Config struct {
	// Volumes are the data directories (dfs.datanode.data.dir, default
	// file://${hadoop.tmp.dir}/dfs/data; see ParseDataDirs). Required.
	Volumes []VolumeConfig
	// FailedVolumesTolerated is how many volumes may fail before the
	// DataNode must stop (dfs.datanode.failed.volumes.tolerated; default
	// 0). -1 means "as long as one volume works". Must be < len(Volumes).
	FailedVolumesTolerated int
	// Choosing is the volume choosing policy, RoundRobin or AvailableSpace
	// (dfs.datanode.fsdataset.volume.choosing.policy, Hadoop's class names
	// accepted; default round-robin). "" means RoundRobin.
	Choosing string
	// AvailableSpaceThreshold: with AvailableSpace, volumes whose free
	// space differs by less than this many bytes count as balanced and
	// are used in turn
	// (dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold;
	// default 10 GiB). 0 means the default.
	AvailableSpaceThreshold int64
	// AvailableSpacePreference is the share of new replicas that go to the
	// emptier volumes when unbalanced, in (0, 1]
	// (...balanced-space-preference-fraction; default 0.75). 0 means the
	// default.
	AvailableSpacePreference float64
	// BytesPerChecksum is the chunk size of new replicas, in (0, 64 KiB]
	// (no key: DefaultBytesPerChecksum, Hadoop's dfs.bytes-per-checksum
	// default, which clients choose per write). Existing replicas keep the
	// value in their meta header. 0 means the default.
	BytesPerChecksum int
	// Reserved is the bytes kept free on each volume for non-HDFS use
	// (dfs.datanode.du.reserved, k/m/g suffixes; default 0).
	Reserved int64
	// DirectIO writes replica data with O_DIRECT from aligned buffers
	// (strata.datanode.direct-io.write; default false). Where the file
	// system or platform refuses it, writes fall back to buffered I/O and
	// the fallback is logged once per volume.
	DirectIO bool
	// DropBehindWrites drops a buffered replica's data pages from the page
	// cache once they are on disk: each early-writeback window when it is
	// waited for, the rest after Finalize's fsync
	// (dfs.datanode.drop.cache.behind.writes; default false, as Hadoop's).
	// Only for volumes on real files (not emulated media, whose wrappers
	// hide the descriptor).
	DropBehindWrites bool
	// OnChange, if set, receives every replica change for incremental
	// block reports (no key). It is called in the order the changes
	// happen, with the dataset's lock held: it must return quickly and
	// must not call the Dataset (append to a queue and return).
	OnChange func(ReplicaEvent)
	// FS is the file system the volumes live on (no key); nil means OSFS
	// (the process's, media.Default()). Tests inject faults here
	// (vfs/errorfs).
	FS FS
	// Logger receives the scan's findings, volume failures and the
	// direct-I/O fallback (no key); nil discards.
	Logger *slog.Logger
}

// DefaultConfig returns a Config with the defaults of conf's table for
// the given volumes.
func DefaultConfig(vols []VolumeConfig) Config {
	c, err := ConfigFrom(conf.New())
	if err != nil {
		panic("fsdataset: the defaults in conf's table do not parse: " + err.Error())
	}
	c.Volumes = vols
	return c
}

// ConfigFrom reads a Config from Hadoop's keys (unset keys take their
// defaults from conf's table). Bad values are reported together; the
// Config is not validated (Open does).
func ConfigFrom(c *conf.Configuration) (Config, error) {
	r := conf.NewReader(c, "fsdataset")
	cfg := Config{BytesPerChecksum: DefaultBytesPerChecksum}
	vols, err := ParseDataDirs(c.Get(KeyDataDir))
	r.AddAs(err)
	cfg.Volumes = vols
	cfg.FailedVolumesTolerated = int(r.Int(KeyFailedTolerated))
	choosing, err := ParseChoosingPolicy(c.Get(KeyChoosingPolicy))
	r.AddAs(err)
	cfg.Choosing = choosing
	cfg.AvailableSpaceThreshold = r.Bytes(KeyBalancedThreshold)
	cfg.AvailableSpacePreference = r.Float(KeyBalancedPreference)
	cfg.Reserved = r.Bytes(KeyReserved)
	cfg.DirectIO = r.Bool(KeyDirectIO)
	cfg.DropBehindWrites = r.Bool(KeyDropBehindWrites)
	return cfg, r.Err()
}

// ParseChoosingPolicy reads a dfs.datanode.fsdataset.volume.choosing.policy
// value: "" or RoundRobin, AvailableSpace, or the name of Hadoop's class
// for either.
func ParseChoosingPolicy(p string) (string, error) {
	switch {
	case p == "" || p == RoundRobin || strings.HasSuffix(p, "RoundRobinVolumeChoosingPolicy"):
		return RoundRobin, nil
	case p == AvailableSpace || strings.HasSuffix(p, "AvailableSpaceVolumeChoosingPolicy"):
		return AvailableSpace, nil
	}
	return "", fmt.Errorf("fsdataset: %s: unknown volume choosing policy %q (want %s or %s)", KeyChoosingPolicy, p, RoundRobin, AvailableSpace)
}

// withDefaults returns c with its "0 means the default" fields set from
// DefaultConfig, a nil FS made OSFS and a nil Logger a discarding one.
func (c Config) withDefaults() Config {
	if c.Choosing == "" || c.AvailableSpaceThreshold == 0 || c.AvailableSpacePreference == 0 || c.BytesPerChecksum == 0 {
		d := DefaultConfig(nil)
		fill(&c.Choosing, d.Choosing)
		fill(&c.AvailableSpaceThreshold, d.AvailableSpaceThreshold)
		fill(&c.AvailableSpacePreference, d.AvailableSpacePreference)
		fill(&c.BytesPerChecksum, d.BytesPerChecksum)
	}
	if c.FS == nil {
		c.FS = OSFS{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func fill[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Validate reports the first field out of range, naming its key.
func (c *Config) Validate() error {
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
		return fmt.Errorf("fsdataset: invalid %s %d: must be -1 or in [0, %d) for %d volume(s)", KeyFailedTolerated, t, len(c.Volumes), len(c.Volumes))
	}
	switch c.Choosing {
	case "", RoundRobin, AvailableSpace:
	default:
		return fmt.Errorf("fsdataset: unknown volume choosing policy %q (want %q or %q)", c.Choosing, RoundRobin, AvailableSpace)
	}
	if c.AvailableSpaceThreshold < 0 {
		return fmt.Errorf("fsdataset: %s must be positive, got %d", KeyBalancedThreshold, c.AvailableSpaceThreshold)
	}
	if p := c.AvailableSpacePreference; !(p >= 0 && p <= 1) {
		return fmt.Errorf("fsdataset: %s must be in (0, 1], got %v", KeyBalancedPreference, p)
	}
	if c.BytesPerChecksum < 0 || c.BytesPerChecksum > maxBytesPerChecksum {
		return fmt.Errorf("fsdataset: invalid bytes per checksum %d (want 1..%d)", c.BytesPerChecksum, maxBytesPerChecksum)
	}
	if c.Reserved < 0 {
		return fmt.Errorf("fsdataset: invalid %s %d: must not be negative", KeyReserved, c.Reserved)
	}
	return nil
}
