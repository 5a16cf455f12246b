package conf

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseGenericOptions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want GenericOptions
		rest []string
	}{
		{"none", nil, GenericOptions{}, []string{}},
		{"no options", []string{"dfs", "-ls", "/"}, GenericOptions{}, []string{"dfs", "-ls", "/"}},
		{
			"first",
			[]string{"-D", "dfs.replication=2", "-Dio.sort.mb=50", "dfs", "-put", "a", "b"},
			GenericOptions{Defines: []KV{{"dfs.replication", "2"}, {"io.sort.mb", "50"}}},
			[]string{"dfs", "-put", "a", "b"},
		},
		{
			"middle and last",
			[]string{"jar", "wc.jar", "-D", "mapreduce.job.reduces=4", "in", "out", "-Dstrata.job.x="},
			GenericOptions{Defines: []KV{{"mapreduce.job.reduces", "4"}, {"strata.job.x", ""}}},
			[]string{"jar", "wc.jar", "in", "out"},
		},
		{
			"value with = and spaces",
			[]string{"-D", " strata.job.q = a=b c "},
			GenericOptions{Defines: []KV{{"strata.job.q", " a=b c "}}},
			[]string{},
		},
		{
			"empty value with space",
			[]string{"-D", "dfs.domain.socket.path=", "x"},
			GenericOptions{Defines: []KV{{"dfs.domain.socket.path", ""}}},
			[]string{"x"},
		},
		{
			"config forms, last wins",
			[]string{"--config", "/etc/a", "namenode", "--config=/etc/b"},
			GenericOptions{ConfDir: "/etc/b"},
			[]string{"namenode"},
		},
		{
			"conf files repeat",
			[]string{"-conf", "a.xml", "run", "-conf=b.xml", "-conf", "c.xml"},
			GenericOptions{Files: []string{"a.xml", "b.xml", "c.xml"}},
			[]string{"run"},
		},
		{
			"fs and jt become defines in order",
			[]string{"-D", "a.b=1", "-fs", "hdfs://nn:8020", "job", "-jt", "jt:8021", "-fs=local", "-fs", "nn2:9000", "-D", "c.d=2"},
			GenericOptions{Defines: []KV{
				{"a.b", "1"},
				{"fs.defaultFS", "hdfs://nn:8020"},
				{"mapreduce.jobtracker.address", "jt:8021"},
				{"fs.defaultFS", "file:///"},
				{"fs.defaultFS", "hdfs://nn2:9000"},
				{"c.d", "2"},
			}},
			[]string{"job"},
		},
		{
			"double dash stops",
			[]string{"-Da.b=1", "dfs", "-rm", "--", "-D", "-conf", "x", "--config"},
			GenericOptions{Defines: []KV{{"a.b", "1"}}},
			[]string{"dfs", "-rm", "--", "-D", "-conf", "x", "--config"},
		},
		{
			"look-alikes pass through",
			[]string{"-d", "--D", "-config", "--conf", "-fsck", "-jtx", "-", "-confx"},
			GenericOptions{},
			[]string{"-d", "--D", "-config", "--conf", "-fsck", "-jtx", "-", "-confx"},
		},
		{
			"option arguments are taken as is",
			[]string{"--config", "-D", "-conf", "--"},
			GenericOptions{ConfDir: "-D", Files: []string{"--"}},
			[]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.args)
			g, rest, err := ParseGenericOptions(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("options = %+v, want %+v", g, tt.want)
			}
			if !slices.Equal(rest, tt.rest) {
				t.Errorf("rest = %q, want %q", rest, tt.rest)
			}
			if !slices.Equal(tt.args, orig) {
				t.Error("args modified")
			}
		})
	}
}

func TestParseGenericOptionsErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-D"}, "-D needs key=value"},
		{[]string{"x", "-D", "novalue"}, `-D needs key=value, got "novalue"`},
		{[]string{"-Dnovalue"}, "-D needs key=value"},
		{[]string{"-D", "=v"}, "-D: empty key"},
		{[]string{"-D= =v"}, "-D: empty key"},
		{[]string{"-D="}, "-D: empty key"},
		{[]string{"--config"}, "--config needs a directory"},
		{[]string{"a", "--config="}, "--config needs a directory"},
		{[]string{"-conf"}, "-conf needs a file"},
		{[]string{"-fs"}, "-fs needs a file system URI"},
		{[]string{"-jt"}, "-jt needs host:port"},
		{[]string{"-jt="}, "-jt needs host:port"},
	}
	for _, tt := range tests {
		_, _, err := ParseGenericOptions(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseGenericOptions(%q) error = %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestBuild(t *testing.T) {
	strataDir, hadoopDir, explicitDir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, strataDir, "core-site.xml", site("strata.job.dir", "strata", "dfs.replication", "1"))
	writeFile(t, hadoopDir, "core-site.xml", site("strata.job.dir", "hadoop"))
	writeFile(t, explicitDir, "core-site.xml", site("strata.job.dir", "explicit"))
	writeFile(t, explicitDir, "hdfs-site.xml", `<configuration><property><name>dfs.blocksize</name><value>64m</value><final>true</final></property></configuration>`)
	extra := writeFile(t, t.TempDir(), "extra.xml", site("dfs.replication", "2", "dfs.blocksize", "32m", "strata.job.extra", "1"))

	t.Setenv("STRATA_CONF_DIR", strataDir)
	t.Setenv("HADOOP_CONF_DIR", hadoopDir)
	build := func(args ...string) *Configuration {
		t.Helper()
		g, _, err := ParseGenericOptions(args)
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.Build()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := build().Get("strata.job.dir"); got != "strata" {
		t.Errorf("STRATA_CONF_DIR not preferred: %q", got)
	}
	if got := build("--config", explicitDir).Get("strata.job.dir"); got != "explicit" {
		t.Errorf("--config not preferred: %q", got)
	}
	t.Setenv("STRATA_CONF_DIR", "")
	if got := build().Get("strata.job.dir"); got != "hadoop" {
		t.Errorf("HADOOP_CONF_DIR not used: %q", got)
	}
	t.Setenv("STRATA_CONF_DIR", strataDir)

	// Layering: defaults < site files < -conf files < -D.
	c := build("-D", "strata.job.extra=cli", "cmd", "-conf", extra)
	if got := c.Get("dfs.replication"); got != "2" {
		t.Errorf("-conf did not override site: %q", got)
	}
	if got := c.Get("strata.job.extra"); got != "cli" {
		t.Errorf("-D did not override -conf: %q", got)
	}
	if got := c.Get("dfs.heartbeat.interval"); got != "3" {
		t.Errorf("default lost: %q", got)
	}
	// Final in a site file beats -conf and -D.
	c = build("--config", explicitDir, "-conf", extra, "-Ddfs.blocksize=1g", "-fs", "nn:8020", "-jt", "jt:1", "-Ddfs.replciation=4")
	if got := c.Get("dfs.blocksize"); got != "64m" {
		t.Errorf("final overridden: %q", got)
	}
	if got := c.Get("fs.defaultFS"); got != "hdfs://nn:8020" {
		t.Errorf("-fs: %q", got)
	}
	if got := c.Get("mapreduce.jobtracker.address"); got != "jt:1" {
		t.Errorf("-jt: %q", got)
	}
	if got := c.Unknown(); !slices.Equal(got, []string{"dfs.replciation"}) {
		t.Errorf("Unknown = %q", got)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, s := range []string{
		"an attempt to override final parameter: dfs.blocksize",
		`ignoring value "32m"`,
		`ignoring value "1g"`,
		`conf: -D: unknown key "dfs.replciation" (did you mean "dfs.replication"?)`,
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings lack %q:\n%s", s, w)
		}
	}

	// Errors: missing --config dir, missing or malformed -conf file.
	for _, args := range [][]string{
		{"--config", filepath.Join(explicitDir, "nope")},
		{"-conf", filepath.Join(explicitDir, "nope.xml")},
	} {
		g, _, err := ParseGenericOptions(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Build(); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("Build(%q) error = %v", args, err)
		}
	}
}
