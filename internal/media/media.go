package media

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/vfs"
)

// Configuration keys.
const (
	// KeyDirs lists the emulated directories: comma-separated DIR=PRESET
	// pairs. Empty (the default) turns emulation off.
	KeyDirs = "strata.media.dirs"
	// KeyRequestBytes is the largest request one charge makes, in bytes
	// (k/m/g suffixes allowed); default 1 MiB.
	KeyRequestBytes = "strata.media.request.bytes"
	// keyPrefix is the prefix of every media key; per-preset overrides
	// are keyPrefix + PRESET + "." + read.mbps, write.mbps, latency,
	// seek or queue.depth.
	keyPrefix = "strata.media."
)

// EnvVar is the environment variable through which Configure hands the
// device table to child processes (the TaskTracker's task children): the
// JSON encoding of a Table. A process that never calls Configure reads it
// on first use.
const EnvVar = "STRATA_MEDIA"

// DefaultRequestBytes is KeyRequestBytes' default.
const DefaultRequestBytes = 1 << 20

const maxQueueDepth = 256

// Device is one emulated directory.
type Device struct {
	Dir    string `json:"dir"` // absolute, clean
	Preset string `json:"preset"`
	Params Params `json:"params"`
}

// Table is the process's emulated devices.
type Table struct {
	Devices []Device `json:"devices"`
	// RequestBytes is the largest request one charge makes.
	RequestBytes int64 `json:"request_bytes"`
}

// Parse reads the media keys of c. An empty strata.media.dirs gives an
// empty table. Unknown keys under strata.media., unknown presets, bad
// values and a directory listed twice are errors.
func Parse(c *conf.Configuration) (*Table, error) {
	ps, reqBytes, err := ResolvePresets(c)
	if err != nil {
		return nil, err
	}
	t := &Table{RequestBytes: reqBytes}
	seen := map[string]bool{}
	for _, pair := range c.GetStrings(KeyDirs) {
		dir, name, ok := strings.Cut(pair, "=")
		dir, name = strings.TrimSpace(dir), strings.TrimSpace(name)
		if !ok || dir == "" || name == "" {
			return nil, fmt.Errorf("media: %s: %q is not DIR=PRESET", KeyDirs, pair)
		}
		preset, found := resolve(ps, name)
		if !found {
			return nil, fmt.Errorf("media: %s: unknown preset %q (want one of %s)", KeyDirs, name, presetNames())
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("media: %s: %w", KeyDirs, err)
		}
		if seen[abs] {
			return nil, fmt.Errorf("media: %s: directory %s listed twice", KeyDirs, abs)
		}
		seen[abs] = true
		t.Devices = append(t.Devices, Device{Dir: abs, Preset: name, Params: preset.Params})
	}
	return t, nil
}

// ResolvePresets returns the built-in presets with the overrides of c
// applied (strata.media.PRESET.PARAM), and strata.media.request.bytes.
func ResolvePresets(c *conf.Configuration) ([]Preset, int64, error) {
	ps := Presets()
	reqBytes := int64(DefaultRequestBytes)
	for _, key := range c.Keys() {
		if !strings.HasPrefix(key, keyPrefix) || key == KeyDirs {
			continue
		}
		if key == KeyRequestBytes {
			n, err := c.GetBytes(key)
			if err != nil {
				return nil, 0, fmt.Errorf("media: %w", err)
			}
			if n < 4096 || n > 1<<30 {
				return nil, 0, fmt.Errorf("media: %s=%d out of range [4096, 1g]", key, n)
			}
			reqBytes = n
			continue
		}
		if err := override(c, key, ps); err != nil {
			return nil, 0, err
		}
	}
	return ps, reqBytes, nil
}

// override applies one strata.media.PRESET.PARAM key.
func override(c *conf.Configuration, key string, ps []Preset) error {
	rest := strings.TrimPrefix(key, keyPrefix)
	name, param, _ := strings.Cut(rest, ".")
	i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return fmt.Errorf("media: unknown key %s (keys are %s, %s and %sPRESET.{%s} for a preset in %s)",
			key, KeyDirs, KeyRequestBytes, keyPrefix, overrideSuffixes(), presetNames())
	}
	p := &ps[i].Params
	var err error
	switch param {
	case "read.mbps":
		p.ReadMBps, err = c.GetFloat(key)
	case "write.mbps":
		p.WriteMBps, err = c.GetFloat(key)
	case "latency":
		p.Latency, err = c.GetDuration(key, time.Microsecond)
	case "seek":
		p.Seek, err = c.GetDuration(key, time.Microsecond)
	case "queue.depth":
		var n int64
		n, err = c.GetInt(key)
		p.QueueDepth = int(n)
		if n != int64(p.QueueDepth) {
			p.QueueDepth = -1
		}
	default:
		return fmt.Errorf("media: unknown key %s (a preset's keys end in %s)", key, overrideSuffixes())
	}
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("media: %s: %w", key, err)
	}
	return nil
}

// state is a table with its devices.
type state struct {
	table   Table
	devices []*device // longest directory first
}

var (
	current  atomic.Pointer[FS] // the process's table over vfs.Default; nil: off
	envOnce  sync.Once
	envError error
)

// Configure installs the device table of c for this process, replacing
// any earlier one, and exports it in $STRATA_MEDIA so that child
// processes started afterwards use the same devices. An empty
// strata.media.dirs turns emulation off (and unsets $STRATA_MEDIA): then
// Default is vfs.Default and Charge returns at once.
func Configure(c *conf.Configuration) error {
	t, err := Parse(c)
	if err != nil {
		return err
	}
	return Install(t)
}

// Install installs t as Configure does; a nil or empty t turns emulation
// off.
func Install(t *Table) error {
	envOnce.Do(func() {}) // an explicit table wins over the environment
	if t == nil || len(t.Devices) == 0 {
		current.Store(nil)
		return os.Unsetenv(EnvVar)
	}
	m, err := New(vfs.Default, t)
	if err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := os.Setenv(EnvVar, string(b)); err != nil {
		return err
	}
	current.Store(m)
	return nil
}

func newState(t *Table) (*state, error) {
	s := &state{table: *t}
	s.table.Devices = append([]Device(nil), t.Devices...)
	if s.table.RequestBytes <= 0 {
		s.table.RequestBytes = DefaultRequestBytes
	}
	for _, d := range s.table.Devices {
		if !filepath.IsAbs(d.Dir) {
			return nil, fmt.Errorf("media: device directory %q is not absolute", d.Dir)
		}
		if err := d.Params.Validate(); err != nil {
			return nil, fmt.Errorf("media: device %s: %w", d.Dir, err)
		}
		s.devices = append(s.devices, newDevice(d, s.table.RequestBytes))
	}
	sort.SliceStable(s.devices, func(i, j int) bool { return len(s.devices[i].Dir) > len(s.devices[j].Dir) })
	return s, nil
}

// load returns the installed FS, reading $STRATA_MEDIA the first time
// when Configure was never called; nil when emulation is off.
func load() *FS {
	envOnce.Do(func() {
		v := os.Getenv(EnvVar)
		if v == "" {
			return
		}
		var t Table
		if err := json.Unmarshal([]byte(v), &t); err != nil {
			envError = fmt.Errorf("media: $%s: %w", EnvVar, err)
			return
		}
		m, err := New(vfs.Default, &t)
		if err != nil {
			envError = fmt.Errorf("media: $%s: %w", EnvVar, err)
			return
		}
		current.Store(m)
	})
	return current.Load()
}

// Current returns the installed table (empty when emulation is off), and
// the error, if any, met reading $STRATA_MEDIA.
func Current() (Table, error) {
	m := load()
	if m == nil {
		return Table{RequestBytes: DefaultRequestBytes}, envError
	}
	t := m.s.table
	t.Devices = append([]Device(nil), t.Devices...)
	return t, envError
}

// Enabled reports whether any directory is emulated.
func Enabled() bool { return load() != nil }

// find returns the device whose directory holds path, or nil.
func (s *state) find(path string) *device {
	if s == nil {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	for _, d := range s.devices {
		if abs == d.Dir || strings.HasPrefix(abs, d.Dir) && (d.Dir == "/" || abs[len(d.Dir)] == filepath.Separator) {
			return d
		}
	}
	return nil
}

// lookup returns the device holding path, or nil when there is none or
// its model costs nothing.
func (s *state) lookup(path string) *device {
	d := s.find(path)
	if d == nil || d.Params.free() {
		return nil
	}
	return d
}

// Lookup returns the emulated device of the process's table (Default)
// holding path, if any. Devices whose model costs nothing (the ram
// preset) are reported too.
func Lookup(path string) (Device, bool) {
	m := load()
	if m == nil {
		return Device{}, false
	}
	return m.Lookup(path)
}

// Charge is Default's Charge: outside emulated directories of the
// process's table it returns nil at once.
func Charge(path string, off, n int64, write bool) error {
	m := load()
	if m == nil {
		return nil
	}
	return m.Charge(path, off, n, write)
}
