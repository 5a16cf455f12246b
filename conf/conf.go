package conf

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Sources reported by Source for values that did not come from a file.
const (
	SourceDefault     = "default"          // the known-keys table
	SourceProgram     = "programmatically" // Set
	SourceCommandLine = "command line"     // Define (-D, -fs, -jt)
)

// Configuration is a set of key/value settings layered over the defaults.
// It is safe for concurrent use. The zero value is not usable; call New.
type Configuration struct {
	mu       sync.RWMutex
	vals     map[string]string // explicitly set values, by canonical key
	sources  map[string]string // where each value in vals came from
	finals   map[string]string // final keys -> the resource that made them final
	unknown  map[string]bool   // keys set from resources that are not known
	warnings []string
	warned   map[string]bool // warnings already recorded, to record each once
	read     sync.Map        // canonical keys asked for by Get, GetRaw or IsSet (see Read)
}

// New returns a Configuration holding only the defaults.
func New() *Configuration {
	return &Configuration{
		vals:    map[string]string{},
		sources: map[string]string{},
		finals:  map[string]string{},
		unknown: map[string]bool{},
		warned:  map[string]bool{},
	}
}

// canonical trims key and replaces a deprecated name by its replacement.
func canonical(key string) string {
	key = strings.TrimSpace(key)
	if r, ok := deprecations[key]; ok {
		return r
	}
	return key
}

// Set sets key to value, overriding any earlier value, as Hadoop's
// Configuration.set does: a programmatic Set overrides even a final key.
// A deprecated key sets its replacement and records a warning. user.name
// cannot be set: the call records a warning and does nothing.
func (c *Configuration) Set(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(key, value, SourceProgram, false, false)
}

// Define sets key to value as a -D key=value command-line override does:
// unlike Set it does not override a key made final by a loaded resource
// (the attempt is recorded as a warning and Define returns false), and an
// unknown key is reported by Unknown and Warnings.
func (c *Configuration) Define(key, value string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setLocked(key, value, SourceCommandLine, true, false)
}

// setLocked sets key from source. With resource set the value is user
// input (a file or the command line): it does not override a final key set
// by another resource, and unknown keys are reported. final marks the key
// final. It reports whether the value was stored.
func (c *Configuration) setLocked(key, value, source string, resource, final bool) bool {
	name := strings.TrimSpace(key)
	if name == "" {
		return false
	}
	if name == userNameKey {
		c.warnLocked(fmt.Sprintf("conf: %s: %s cannot be set; ${%s} is the operating-system user", sourcePrefix(source), userNameKey, userNameKey))
		return false
	}
	key = canonical(name)
	if key != name {
		c.warnLocked(fmt.Sprintf("conf: %s is deprecated. Instead, use %s", name, key))
	}
	if resource {
		if by, ok := c.finals[key]; ok && by != source {
			if old, set := c.vals[key]; !set || old != value {
				c.warnLocked(fmt.Sprintf("conf: %s: an attempt to override final parameter: %s (final in %s); ignoring value %q", sourcePrefix(source), key, by, value))
			}
			return false
		}
		if _, known := keys[key]; !known && !isFree(key) {
			c.unknown[key] = true
			msg := fmt.Sprintf("conf: %s: unknown key %q", sourcePrefix(source), key)
			if s := Suggest(key); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			c.warnLocked(msg)
		}
		if final {
			c.finals[key] = source
		}
	}
	c.vals[key] = value
	c.sources[key] = source
	return true
}

// sourcePrefix names source in messages: -D for the command line.
func sourcePrefix(source string) string {
	if source == SourceCommandLine {
		return "-D"
	}
	return source
}

// warnLocked records msg unless it was recorded before.
func (c *Configuration) warnLocked(msg string) {
	if c.warned[msg] {
		return
	}
	c.warned[msg] = true
	c.warnings = append(c.warnings, msg)
}

// Get returns key's value, or its default, or "" when it has neither, with
// ${...} references expanded (see the package documentation). A deprecated
// key gets its replacement's value; user.name gets the operating-system user.
func (c *Configuration) Get(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	key = canonical(key)
	c.read.Store(key, true)
	v, ok := c.rawLocked(key)
	if !ok {
		if key == userNameKey {
			return userName()
		}
		return ""
	}
	e := expander{c: c, budget: maxExpansions}
	return e.expand(v, []string{key})
}

// GetTrimmed returns Get(key) without leading and trailing white space.
func (c *Configuration) GetTrimmed(key string) string {
	return strings.TrimSpace(c.Get(key))
}

// GetRaw returns key's value, or its default, without expanding references.
func (c *Configuration) GetRaw(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	key = canonical(key)
	c.read.Store(key, true)
	v, _ := c.rawLocked(key)
	return v
}

// rawLocked returns key's explicit value or default, and whether it has one.
func (c *Configuration) rawLocked(key string) (string, bool) {
	if v, ok := c.vals[key]; ok {
		return v, true
	}
	if k, ok := keys[key]; ok {
		return k.Default, true
	}
	return "", false
}

// IsSet reports whether key (or the key replacing it) was set explicitly.
func (c *Configuration) IsSet(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	key = canonical(key)
	c.read.Store(key, true)
	_, ok := c.vals[key]
	return ok
}

// Read returns, sorted, the canonical keys asked for so far with Get,
// GetRaw, IsSet or the typed getters (not keys reached only through ${...}
// expansion). Tests use it to check that a daemon's ConfigFrom reads only
// known keys and maps each one it reads (package conf/conftest).
func (c *Configuration) Read() []string {
	var ks []string
	c.read.Range(func(k, _ any) bool {
		ks = append(ks, k.(string))
		return true
	})
	slices.Sort(ks)
	return ks
}

// Unset removes key's explicit value, so Get returns its default again.
// Like Hadoop's unset it also lifts the key's final mark.
func (c *Configuration) Unset(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key = canonical(key)
	delete(c.vals, key)
	delete(c.sources, key)
	delete(c.finals, key)
	delete(c.unknown, key)
}

// Source returns where key's value came from: a file path, SourceCommandLine,
// SourceProgram, SourceDefault for a known key not set explicitly, or "" for
// an unknown key not set.
func (c *Configuration) Source(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	key = canonical(key)
	if s, ok := c.sources[key]; ok {
		return s
	}
	if _, ok := keys[key]; ok {
		return SourceDefault
	}
	return ""
}

// IsFinal reports whether a loaded resource marked key final.
func (c *Configuration) IsFinal(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.finals[canonical(key)]
	return ok
}

// Keys returns the keys set explicitly, sorted.
func (c *Configuration) Keys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keysLocked()
}

func (c *Configuration) keysLocked() []string {
	return slices.Sorted(maps.Keys(c.vals))
}

// Unknown returns, sorted, the keys set from files or the command line
// (LoadFile, Define) that are not known keys, not deprecated names and not
// under a prefix reserved for user-defined keys (such as "strata.job.").
// Keys set with Set are the program's own business and are not reported.
func (c *Configuration) Unknown() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.unknown))
}

// Warnings returns the warnings recorded so far, oldest first, each once:
// deprecated keys, ignored attempts to override final keys, unknown keys
// (with a suggestion when one is close) and ignored properties in files.
// Callers print them to standard error.
func (c *Configuration) Warnings() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.warnings)
}

// Clone returns an independent copy of c, including final marks, unknown
// keys and warnings.
func (c *Configuration) Clone() *Configuration {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return &Configuration{
		vals:     maps.Clone(c.vals),
		sources:  maps.Clone(c.sources),
		finals:   maps.Clone(c.finals),
		unknown:  maps.Clone(c.unknown),
		warnings: slices.Clone(c.warnings),
		warned:   maps.Clone(c.warned),
	}
}
