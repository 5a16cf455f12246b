package topology

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScriptMappingBatchesAndCaches(t *testing.T) {
	m := NewScriptMapping("topo.sh", 2)
	var runs [][]string
	m.run = func(_ context.Context, _ string, args []string) ([]byte, error) {
		runs = append(runs, append([]string(nil), args...))
		var out []string
		for _, a := range args {
			if a == "bad" {
				return nil, errors.New("exit 1")
			}
			out = append(out, "rack-"+a[len(a)-1:])
		}
		return []byte(strings.Join(out, "\n") + "\n"), nil
	}
	got := m.Resolve([]string{"h1", "h2", "h3", "h1"})
	want := []string{"/rack-1", "/rack-2", "/rack-3", "/rack-1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Resolve = %v, want %v", got, want)
		}
	}
	if len(runs) != 2 || len(runs[0]) != 2 || len(runs[1]) != 1 {
		t.Fatalf("script runs %v, want batches of 2 then 1", runs)
	}
	m.Resolve([]string{"h3", "h2"})
	if len(runs) != 2 {
		t.Fatalf("cached names ran the script again: %v", runs)
	}
	if r := m.Resolve([]string{"bad"}); r[0] != DefaultRack {
		t.Fatalf("failed script: %v", r)
	}
	if _, ok := m.Cached("bad"); ok {
		t.Fatal("a failed resolution was cached")
	}
}

func TestScriptMappingRealScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "topo.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do case $a in 10.0.1.*) echo /dc1/r1;; *) echo /dc1/r2;; esac; done\n"), 0o755)
	m := NewScriptMapping(script, 100)
	got := m.Resolve([]string{"10.0.1.5", "10.0.2.7"})
	if got[0] != "/dc1/r1" || got[1] != "/dc1/r2" {
		t.Fatalf("Resolve = %v", got)
	}
	if r := NewScriptMapping("", 0).Resolve([]string{"x"}); r[0] != DefaultRack {
		t.Fatalf("no script: %v", r)
	}
}

func TestTableMapping(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "topology.table")
	os.WriteFile(f, []byte("# host rack\n127.0.0.1:9001 /r1\n10.1.1.1 r2\nlonely\n"), 0o644)
	m := NewTableMapping(f)
	if r := m.Resolve([]string{"10.1.1.1", "10.9.9.9"}); r[0] != "/r2" || r[1] != DefaultRack {
		t.Fatalf("Resolve = %v", r)
	}
	if r := ResolveNode(m, "127.0.0.1", 9001); r != "/r1" {
		t.Fatalf("ResolveNode by ip:port = %q", r)
	}
	if r := ResolveNode(m, "127.0.0.1", 9002); r != DefaultRack {
		t.Fatalf("ResolveNode unlisted = %q", r)
	}
}

func TestNewSelectsByClassName(t *testing.T) {
	if m, err := New(Config{Impl: TableMappingClass}); err != nil || m == nil {
		t.Fatal(err)
	}
	if _, ok := mustNew(t, Config{}).(*ScriptMapping); !ok {
		t.Fatal("default is not the script mapping")
	}
	if _, err := New(Config{Impl: "org.example.Nope"}); err == nil {
		t.Fatal("unknown class accepted")
	}
}

func mustNew(t *testing.T, c Config) Mapping {
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDistance(t *testing.T) {
	cases := []struct {
		ra, na, rb, nb string
		want           int
	}{
		{"/r1", "a", "/r1", "a", 0},
		{"/r1", "a", "/r1", "b", 2},
		{"/r1", "a", "/r2", "b", 4},
		{"/d1/r1", "a", "/d2/r1", "b", 6},
	}
	for _, c := range cases {
		if got := Distance(c.ra, c.na, c.rb, c.nb); got != c.want {
			t.Errorf("Distance(%s/%s, %s/%s) = %d, want %d", c.ra, c.na, c.rb, c.nb, got, c.want)
		}
	}
}

// TestScriptTimeoutKillsChildren: a script whose child outlives the
// timeout (the shell forks a sleep that holds the output pipe) is killed
// with its whole process group, promptly.
func TestScriptTimeoutKillsChildren(t *testing.T) {
	old := ScriptTimeout
	ScriptTimeout = 300 * time.Millisecond
	defer func() { ScriptTimeout = old }()
	script := filepath.Join(t.TempDir(), "slow.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nsleep 8\necho /r1\n"), 0o755)
	m := NewScriptMapping(script, 100)
	start := time.Now()
	if r := m.Resolve([]string{"10.0.0.1"}); r[0] != DefaultRack {
		t.Fatalf("timed-out script placed the node at %q", r[0])
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a %v script timeout took %v", ScriptTimeout, d)
	}
}

// TestScriptCacheBounded: the cache keeps at most its bound, evicting
// the least recently used answer.
func TestScriptCacheBounded(t *testing.T) {
	m := NewScriptMapping("/topo", 100)
	m.cache = newLRU(2)
	runs := 0
	m.run = func(_ context.Context, _ string, args []string) ([]byte, error) {
		runs++
		return []byte(strings.Repeat("/r ", len(args))), nil
	}
	m.Resolve([]string{"a", "b"})
	m.Resolve([]string{"a"}) // a is now the most recent
	m.Resolve([]string{"c"}) // evicts b
	if m.cache.len() != 2 {
		t.Fatalf("cache holds %d, want 2", m.cache.len())
	}
	if _, ok := m.Cached("b"); ok {
		t.Fatal("least recently used entry kept")
	}
	if _, ok := m.Cached("a"); !ok {
		t.Fatal("recently used entry evicted")
	}
	if runs != 2 {
		t.Fatalf("%d script runs, want 2", runs)
	}
}
