package experiment

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"github.com/stratafs/strata/conf"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/storage"
)

//go:embed profiles/*.profile
var builtinFS embed.FS

// NoMedia is the preset of a plain directory, without emulation.
const NoMedia = "none"

// Profile is a storage profile: which per-node devices exist, which
// device holds the DataNode volumes and which the TaskTracker's
// intermediate data, plus the prices and power the cost tables use.
type Profile struct {
	Name, Description string
	// Devices maps a device name to its media preset, in file order.
	Devices []Device
	// Volumes are the DataNode volumes: a storage type on a device.
	Volumes []Volume
	// LocalDirs are the devices holding mapreduce.cluster.local.dir.
	LocalDirs []string
	// StoragePolicy, if set, is set on the experiment's directories.
	StoragePolicy string
	// Conf are configuration overrides for the cluster and its jobs.
	Conf [][2]string
	// Price is the cluster's price in dollars; Watts its power draw.
	Price, Watts float64
	// PaperSpeedup is the published speed-up over the baseline, 0 if none.
	PaperSpeedup float64
	// NodeCPUs is each node's CPU share with Options.Hosts (its DataNode,
	// TaskTracker and tasks share a CFS quota of that many CPUs), 0 for
	// none: an Atom-class node beside a server-class one.
	NodeCPUs float64
	// LinkMbps is every host's link rate with Options.Hosts, in Mbit/s
	// (tc tbf on both ends of its veth pair), 0 for an unshaped link.
	LinkMbps float64
	// Source is the file the profile came from ("builtin:<name>" for the
	// built-in ones).
	Source string
}

// Device is a per-node device: a directory <node>/<name> emulated as Preset.
type Device struct{ Name, Preset string }

// Volume is a DataNode volume on a device.
type Volume struct {
	Type   storage.Type
	Device string
}

var deviceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// maxProfileSize bounds what is read of a profile file.
const maxProfileSize = 1 << 20

// ParseProfile reads a profile in the key = value format of
// docs/format/profile.md; source names it in errors.
func ParseProfile(r io.Reader, source string) (*Profile, error) {
	p := &Profile{Source: source}
	seen := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(r, maxProfileSize+1))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxProfileSize {
			return nil, fmt.Errorf("profile %s: larger than %d bytes", source, maxProfileSize)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("profile %s:%d: %s", source, n, fmt.Sprintf(format, args...))
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, errf("expected key = value, got %q", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if prev, dup := seen[k]; dup {
			return nil, errf("%s is already set on line %d", k, prev)
		}
		seen[k] = n
		num := func() (float64, error) {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0) || math.IsInf(f, 0) {
				return 0, errf("%s: %q is not a non-negative number", k, v)
			}
			return f, nil
		}
		var err error
		switch {
		case k == "name":
			if !deviceName.MatchString(v) {
				return nil, errf("name %q: use lower-case letters, digits, '-' and '_'", v)
			}
			p.Name = v
		case k == "description":
			p.Description = v
		case strings.HasPrefix(k, "device."):
			d := strings.TrimPrefix(k, "device.")
			if !deviceName.MatchString(d) {
				return nil, errf("device name %q: use lower-case letters, digits, '-' and '_'", d)
			}
			if !knownPreset(v) {
				return nil, errf("device %s: unknown preset %q (known: %s)", d, v, strings.Join(presetNames(), ", "))
			}
			p.Devices = append(p.Devices, Device{Name: d, Preset: v})
		case k == "hdfs.volumes":
			for _, e := range conf.TrimmedStrings(v) {
				vol := Volume{Type: storage.Disk, Device: e}
				if strings.HasPrefix(e, "[") {
					end := strings.Index(e, "]")
					if end < 0 {
						return nil, errf("hdfs.volumes: %q has no closing ]", e)
					}
					t, terr := storage.ParseType(e[1:end])
					if terr != nil {
						return nil, errf("hdfs.volumes: %v", terr)
					}
					vol.Type, vol.Device = t, strings.TrimSpace(e[end+1:])
				}
				p.Volumes = append(p.Volumes, vol)
			}
		case k == "mapred.local.dir":
			p.LocalDirs = conf.TrimmedStrings(v)
		case k == "storage.policy":
			p.StoragePolicy = v
		case strings.HasPrefix(k, "conf."):
			key := strings.TrimPrefix(k, "conf.")
			if key == "" {
				return nil, errf("conf.: no configuration key")
			}
			p.Conf = append(p.Conf, [2]string{key, v})
		case k == "price":
			p.Price, err = num()
		case k == "watts":
			p.Watts, err = num()
		case k == "paper.speedup":
			p.PaperSpeedup, err = num()
		case k == "node.cpus":
			if p.NodeCPUs, err = num(); err == nil && (p.NodeCPUs < 0.01 || p.NodeCPUs > 1024) {
				err = errf("node.cpus: %v is not a CPU share in [0.01, 1024]", p.NodeCPUs)
			}
		case k == "link.mbps":
			if p.LinkMbps, err = num(); err == nil && (p.LinkMbps < 0.1 || p.LinkMbps > 1e6) {
				err = errf("link.mbps: %v is not a rate in [0.1, 1000000] Mbit/s", p.LinkMbps)
			}
		default:
			return nil, errf("unknown key %q", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("profile %s:%d: line longer than 64 KiB", source, n+1)
		}
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	return p, nil
}

func knownPreset(s string) bool {
	_, ok := media.LookupPreset(s)
	return ok || s == NoMedia
}

func presetNames() []string {
	var out []string
	for _, p := range media.Presets() {
		out = append(out, p.Name)
	}
	return append(out, NoMedia, "raid0-<n>-<preset>")
}

func (p *Profile) validate() error {
	if p.Name == "" {
		return errors.New("no name")
	}
	if len(p.Volumes) == 0 {
		return errors.New("no hdfs.volumes")
	}
	if len(p.LocalDirs) == 0 {
		return errors.New("no mapred.local.dir")
	}
	known := map[string]bool{}
	for _, d := range p.Devices {
		if known[d.Name] {
			return fmt.Errorf("device %s declared twice", d.Name)
		}
		known[d.Name] = true
	}
	used := map[string]bool{}
	for _, v := range p.Volumes {
		if !known[v.Device] {
			return fmt.Errorf("hdfs.volumes: unknown device %q (declare it with device.%s = PRESET)", v.Device, v.Device)
		}
		if used[v.Device] {
			return fmt.Errorf("hdfs.volumes: device %s holds two volumes", v.Device)
		}
		used[v.Device] = true
	}
	for _, d := range p.LocalDirs {
		if !known[d] {
			return fmt.Errorf("mapred.local.dir: unknown device %q (declare it with device.%s = PRESET)", d, d)
		}
	}
	return nil
}

// Emulated reports whether any device of the profile has a media preset.
func (p *Profile) Emulated() bool {
	for _, d := range p.Devices {
		if d.Preset != NoMedia {
			return true
		}
	}
	return false
}

// Node is node i's layout under the cluster directory dir: a directory
// per device, the volumes in <device>/data, intermediate data in
// <device>/mapred-local.
func (p *Profile) Node(dir string, i int) localcluster.Node {
	base := localcluster.NodeDir(dir, i)
	var n localcluster.Node
	for _, v := range p.Volumes {
		n.Volumes = append(n.Volumes, fsdataset.VolumeConfig{Path: filepath.Join(base, v.Device, "data"), Type: v.Type})
	}
	for _, d := range p.LocalDirs {
		n.LocalDirs = append(n.LocalDirs, filepath.Join(base, d, "mapred-local"))
	}
	return n
}

// MediaDirs is the strata.media.dirs value for nodes DataNodes under dir:
// DIR=PRESET for every emulated device of every node, each its own device.
func (p *Profile) MediaDirs(dir string, nodes int) string {
	var out []string
	for i := 0; i < nodes; i++ {
		for _, d := range p.Devices {
			if d.Preset != NoMedia {
				out = append(out, filepath.Join(localcluster.NodeDir(dir, i), d.Name)+"="+d.Preset)
			}
		}
	}
	return strings.Join(out, ",")
}

// BuiltinProfiles returns the names of the built-in profiles, sorted.
func BuiltinProfiles() []string {
	ents, _ := builtinFS.ReadDir("profiles")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".profile"))
	}
	sort.Strings(out)
	return out
}

// LoadProfile returns the built-in profile called name, or, if name
// contains a path separator or ends in .profile, the profile in that file.
func LoadProfile(name string) (*Profile, error) {
	if strings.ContainsRune(name, os.PathSeparator) || strings.HasSuffix(name, ".profile") {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		defer f.Close()
		return ParseProfile(f, name)
	}
	f, err := builtinFS.Open("profiles/" + name + ".profile")
	if err != nil {
		return nil, fmt.Errorf("profile: no built-in profile %q (built-in: %s; or give a file path)", name, strings.Join(BuiltinProfiles(), ", "))
	}
	defer f.Close()
	return ParseProfile(f, "builtin:"+name)
}

// LoadProfiles loads a comma-separated list of profile names or files;
// names must be unique.
func LoadProfiles(list string) ([]*Profile, error) {
	var out []*Profile
	seen := map[string]bool{}
	for _, n := range conf.TrimmedStrings(list) {
		p, err := LoadProfile(n)
		if err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("profile %s is listed twice", p.Name)
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("no profiles given")
	}
	return out, nil
}
