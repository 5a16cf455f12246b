package conf

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestGetDefaultsAndSet(t *testing.T) {
	c := New()
	tests := []struct{ key, want string }{
		{"dfs.replication", "3"},
		{"fs.defaultFS", "file:///"},
		{"no.such.key", ""},
		{"dfs.domain.socket.path", ""},
		{"  dfs.replication  ", "3"},
	}
	for _, tt := range tests {
		if got := c.Get(tt.key); got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if c.IsSet("dfs.replication") || len(c.Keys()) != 0 {
		t.Fatal("new Configuration has explicit keys")
	}
	if got := c.Source("dfs.replication"); got != SourceDefault {
		t.Errorf("Source = %q, want %q", got, SourceDefault)
	}
	if got := c.Source("no.such.key"); got != "" {
		t.Errorf("Source(unknown) = %q, want empty", got)
	}
	c.Set("dfs.replication", "2")
	c.Set(" my.key ", " v ")
	if got := c.Get("dfs.replication"); got != "2" {
		t.Errorf("after Set: %q", got)
	}
	if got := c.Get("my.key"); got != " v " {
		t.Errorf("Get(my.key) = %q (value must not be trimmed)", got)
	}
	if got := c.GetTrimmed("my.key"); got != "v" {
		t.Errorf("GetTrimmed = %q", got)
	}
	if got := c.Source("dfs.replication"); got != SourceProgram {
		t.Errorf("Source = %q", got)
	}
	if got, want := c.Keys(), []string{"dfs.replication", "my.key"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %q, want %q", got, want)
	}
	if len(c.Unknown()) != 0 {
		t.Errorf("Set keys reported unknown: %q", c.Unknown())
	}
	c.Unset("dfs.replication")
	if c.IsSet("dfs.replication") || c.Get("dfs.replication") != "3" {
		t.Error("Unset did not restore the default")
	}
	c.Set("", "x")
	if slices.Contains(c.Keys(), "") {
		t.Error("empty key stored")
	}
}

func TestDeprecation(t *testing.T) {
	c := New()
	c.Set("fs.default.name", "hdfs://nn:8020")
	c.Set("dfs.block.size", "64m")
	c.Set("fs.default.name", "hdfs://nn:9000") // warns once
	if got := c.Get("fs.defaultFS"); got != "hdfs://nn:9000" {
		t.Errorf("fs.defaultFS = %q", got)
	}
	if got := c.Get("fs.default.name"); got != "hdfs://nn:9000" {
		t.Errorf("Get(old name) = %q", got)
	}
	if !c.IsSet("fs.default.name") {
		t.Error("IsSet(old name) = false")
	}
	if got, want := c.Keys(), []string{"dfs.blocksize", "fs.defaultFS"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %q, want %q", got, want)
	}
	want := []string{
		"conf: fs.default.name is deprecated. Instead, use fs.defaultFS",
		"conf: dfs.block.size is deprecated. Instead, use dfs.blocksize",
	}
	if got := c.Warnings(); !slices.Equal(got, want) {
		t.Errorf("Warnings = %q, want %q", got, want)
	}
	for old, repl := range deprecations {
		c := New()
		c.Define(old, "v-"+old)
		if got := c.Get(repl); got != "v-"+old {
			t.Errorf("%s -> %s: got %q", old, repl, got)
		}
		if len(c.Unknown()) != 0 {
			t.Errorf("%s reported unknown", old)
		}
		if w := c.Warnings(); len(w) != 1 || !strings.HasSuffix(w[0], old+" is deprecated. Instead, use "+repl) {
			t.Errorf("%s: warnings %q", old, w)
		}
	}
}

func TestDefineUnknownAndFinal(t *testing.T) {
	c := New()
	if err := c.LoadReader(strings.NewReader(`<configuration>
<property><name>dfs.replication</name><value>2</value><final>true</final></property>
</configuration>`), "site.xml"); err != nil {
		t.Fatal(err)
	}
	if c.Define("dfs.replication", "5") {
		t.Error("Define overrode a final key")
	}
	if !c.Define("dfs.replciation", "5") || !c.Define("strata.job.words", "x") || !c.Define("hadoop.proxyuser.bob.hosts", "*") {
		t.Error("Define refused a non-final key")
	}
	c.Define("dfs.replication", "2") // same value: no warning
	if got := c.Get("dfs.replication"); got != "2" {
		t.Errorf("final value = %q", got)
	}
	if !c.IsFinal("dfs.replication") || c.IsFinal("dfs.blocksize") {
		t.Error("IsFinal wrong")
	}
	if got, want := c.Unknown(), []string{"dfs.replciation"}; !slices.Equal(got, want) {
		t.Errorf("Unknown = %q, want %q", got, want)
	}
	if got := c.Get("dfs.replciation"); got != "5" {
		t.Errorf("unknown key not stored: %q", got)
	}
	want := []string{
		`conf: -D: an attempt to override final parameter: dfs.replication (final in site.xml); ignoring value "5"`,
		`conf: -D: unknown key "dfs.replciation" (did you mean "dfs.replication"?)`,
	}
	if got := c.Warnings(); !slices.Equal(got, want) {
		t.Errorf("Warnings =\n%q\nwant\n%q", got, want)
	}
	if got := c.Source("dfs.replciation"); got != SourceCommandLine {
		t.Errorf("Source = %q", got)
	}
	// A programmatic Set overrides final, as in Hadoop.
	c.Set("dfs.replication", "7")
	if got := c.Get("dfs.replication"); got != "7" {
		t.Errorf("Set did not override final: %q", got)
	}
	c.Define("zzz.unrelated", "1")
	if w := c.Warnings(); w[len(w)-1] != `conf: -D: unknown key "zzz.unrelated"` {
		t.Errorf("last warning %q", w[len(w)-1])
	}
	c.Unset("zzz.unrelated")
	if slices.Contains(c.Unknown(), "zzz.unrelated") {
		t.Error("Unset key still unknown")
	}
}

func TestUserName(t *testing.T) {
	c := New()
	u := userName()
	if u == "" {
		t.Skip("no user name available")
	}
	if got := c.Get("user.name"); got != u {
		t.Errorf("Get(user.name) = %q, want %q", got, u)
	}
	c.Set("user.name", "mallory")
	if c.Define("user.name", "mallory") {
		t.Error("Define(user.name) succeeded")
	}
	if got := c.Get("user.name"); got != u {
		t.Errorf("user.name was set: %q", got)
	}
	if c.IsSet("user.name") || len(c.Unknown()) != 0 {
		t.Error("user.name stored")
	}
	if got := c.Get("hadoop.tmp.dir"); got != "/tmp/hadoop-"+u {
		t.Errorf("hadoop.tmp.dir = %q", got)
	}
	if len(c.Warnings()) != 2 {
		t.Errorf("warnings: %q", c.Warnings())
	}
}

func TestClone(t *testing.T) {
	c := New()
	c.LoadReader(strings.NewReader(`<configuration><property><name>a.b</name><value>1</value><final>true</final></property></configuration>`), "f.xml")
	d := c.Clone()
	c.Set("dfs.replication", "1")
	d.Set("dfs.replication", "2")
	if c.Get("dfs.replication") != "1" || d.Get("dfs.replication") != "2" {
		t.Error("clones share values")
	}
	if !d.IsFinal("a.b") || !slices.Equal(d.Unknown(), []string{"a.b"}) || len(d.Warnings()) != 1 {
		t.Errorf("clone lost state: final %v unknown %q warnings %q", d.IsFinal("a.b"), d.Unknown(), d.Warnings())
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				k := fmt.Sprintf("strata.job.k%d", j%10)
				c.Set(k, fmt.Sprintf("${strata.job.k%d}-%d", (j+1)%10, i))
				c.Define("io.sort.mb", "10")
				_ = c.Get(k)
				_, _ = c.GetBytes("dfs.blocksize")
				_ = c.Keys()
				_ = c.Warnings()
			}
		}()
	}
	wg.Wait()
}
