package conf

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// site returns a resource setting the given name/value pairs.
func site(kv ...string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n")
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("  <property><name>" + kv[i] + "</name><value>" + kv[i+1] + "</value></property>\n")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

func TestLoadReader(t *testing.T) {
	tests := []struct {
		name  string
		xml   string
		want  map[string]string // expected raw values
		final []string
		warns []string // substrings, one per expected warning
	}{
		{
			name: "hadoop format",
			xml: `<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- Licensed to the Apache Software Foundation -->
<configuration>
  <property>
    <name> dfs.replication </name>
    <value>2</value>
    <description>Default block replication.</description>
  </property>
  <property>
    <name>dfs.namenode.name.dir</name>
    <value>  /a,&#10;/b &amp; c </value>
    <final>true</final>
    <source>hdfs-default.xml</source>
  </property>
  <property><name>dfs.blocksize</name><value><![CDATA[<64m>]]></value></property>
  <property><name>dfs.domain.socket.path</name><value/></property>
</configuration>`,
			want:  map[string]string{"dfs.replication": "2", "dfs.namenode.name.dir": "  /a,\n/b & c ", "dfs.blocksize": "<64m>", "dfs.domain.socket.path": ""},
			final: []string{"dfs.namenode.name.dir"},
		},
		{
			name:  "short form and nested configuration",
			xml:   `<configuration><property name="dfs.replication" value="1" final="true"/><configuration><property><name>fs.defaultFS</name><value>hdfs://x</value></property></configuration></configuration>`,
			want:  map[string]string{"dfs.replication": "1", "fs.defaultFS": "hdfs://x"},
			final: []string{"dfs.replication"},
		},
		{
			name:  "later property in the same file wins, even if final",
			xml:   `<configuration><property><name>dfs.replication</name><value>1</value><final>true</final></property><property><name>dfs.replication</name><value>2</value></property></configuration>`,
			want:  map[string]string{"dfs.replication": "2"},
			final: []string{"dfs.replication"},
		},
		{
			name:  "final without value marks final only",
			xml:   `<configuration><property><name>dfs.replication</name><final>true</final></property></configuration>`,
			want:  map[string]string{},
			final: []string{"dfs.replication"},
		},
		{
			name:  "ignored elements and deprecated and unknown keys",
			xml:   `<configuration><propery><name>x</name></propery><property><value>v</value></property><property><name>fs.default.name</name><value>hdfs://old</value><tag>t</tag><bogus/></property><property><name>dfs.replciation</name><value>9</value></property></configuration>`,
			want:  map[string]string{"fs.defaultFS": "hdfs://old", "dfs.replciation": "9"},
			warns: []string{"t.xml: line 1: ignoring element <propery>", "t.xml: line 1: ignoring <property> without a name", "t.xml: line 1: ignoring element <bogus> in <property>", "fs.default.name is deprecated. Instead, use fs.defaultFS", `conf: t.xml: unknown key "dfs.replciation" (did you mean "dfs.replication"?)`},
		},
		{
			name: "latin-1",
			xml:  "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><configuration><property><name>strata.job.x</name><value>caf\xe9</value></property></configuration>",
			want: map[string]string{"strata.job.x": "café"},
		},
		{
			name: "empty configuration",
			xml:  "<configuration/>",
			want: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			if err := c.LoadReader(strings.NewReader(tt.xml), "t.xml"); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, k := range c.Keys() {
				got[k] = c.GetRaw(k)
				if c.Source(k) != "t.xml" {
					t.Errorf("Source(%s) = %q", k, c.Source(k))
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("keys %q, want %d keys", c.Keys(), len(tt.want))
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range tt.final {
				if !c.IsFinal(k) {
					t.Errorf("%s not final", k)
				}
			}
			w := c.Warnings()
			if len(w) != len(tt.warns) {
				t.Errorf("warnings %q, want %d", w, len(tt.warns))
			}
			for i := range min(len(w), len(tt.warns)) {
				if !strings.Contains(w[i], tt.warns[i]) {
					t.Errorf("warning %d = %q, want it to contain %q", i, w[i], tt.warns[i])
				}
			}
		})
	}
}

func TestLoadReaderMalformed(t *testing.T) {
	tests := []struct{ name, xml, wantErr string }{
		{"empty", "", "no <configuration> element"},
		{"only prolog", `<?xml version="1.0"?><!-- c -->`, "no <configuration> element"},
		{"wrong root", `<properties><property/></properties>`, "top-level element is <properties>, want <configuration>"},
		{"unclosed", "<configuration>\n<property><name>a</name><value>b</value>\n", "XML syntax error on line 3: unexpected EOF"},
		{"mismatched", "<configuration>\n<property><name>a</name></value></property></configuration>", "line 2"},
		{"bad entity", `<configuration><property><name>a</name><value>&nbsp;</value></property></configuration>`, "invalid character entity &nbsp;"},
		{"text outside", `junk<configuration/>`, "text outside <configuration>"},
		{"second root", "<configuration/>\n<configuration/>", "line 2: element <configuration> after </configuration>"},
		{"element in value", `<configuration><property><name>a</name><value>x<b/></value></property></configuration>`, "unexpected element <b> in <value>"},
		{"xinclude", `<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="other.xml"/></configuration>`, "XInclude"},
		{"unsupported encoding", `<?xml version="1.0" encoding="EBCDIC"?><configuration/>`, `unsupported encoding "EBCDIC"`},
		{"binary", "\x00\x01\x02", "XML syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.Set("dfs.replication", "2")
			err := c.LoadReader(strings.NewReader(tt.xml), "/etc/strata/bad-site.xml")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "conf: /etc/strata/bad-site.xml: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want the file and %q", err, tt.wantErr)
			}
			if got := c.Keys(); !slices.Equal(got, []string{"dfs.replication"}) || c.Get("dfs.replication") != "2" {
				t.Errorf("a malformed resource changed the configuration: %q", got)
			}
		})
	}
}

func TestFinalAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "core-site.xml", `<configuration>
<property><name>fs.defaultFS</name><value>hdfs://a:8020</value><final>true</final></property>
<property><name>dfs.replication</name><value>1</value></property>
</configuration>`)
	writeFile(t, dir, "hdfs-site.xml", `<configuration>
<property><name>fs.default.name</name><value>hdfs://b:8020</value></property>
<property><name>dfs.replication</name><value>2</value><final>true</final></property>
</configuration>`)
	extra := writeFile(t, t.TempDir(), "job.xml", site("dfs.replication", "5", "fs.defaultFS", "hdfs://a:8020"))
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(extra); err != nil {
		t.Fatal(err)
	}
	c.Define("dfs.replication", "6")
	if got := c.Get("fs.defaultFS"); got != "hdfs://a:8020" {
		t.Errorf("fs.defaultFS = %q", got)
	}
	if got := c.Get("dfs.replication"); got != "2" {
		t.Errorf("dfs.replication = %q", got)
	}
	core, hdfs := filepath.Join(dir, "core-site.xml"), filepath.Join(dir, "hdfs-site.xml")
	if c.Source("fs.defaultFS") != core || c.Source("dfs.replication") != hdfs {
		t.Errorf("sources %q %q", c.Source("fs.defaultFS"), c.Source("dfs.replication"))
	}
	want := []string{
		"conf: fs.default.name is deprecated. Instead, use fs.defaultFS",
		`conf: ` + hdfs + `: an attempt to override final parameter: fs.defaultFS (final in ` + core + `); ignoring value "hdfs://b:8020"`,
		`conf: ` + extra + `: an attempt to override final parameter: dfs.replication (final in ` + hdfs + `); ignoring value "5"`,
		`conf: -D: an attempt to override final parameter: dfs.replication (final in ` + hdfs + `); ignoring value "6"`,
	}
	if got := c.Warnings(); !slices.Equal(got, want) {
		t.Errorf("Warnings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoadDirOrder(t *testing.T) {
	dir := t.TempDir()
	// Each file sets order.<file> and overrides strata.job.last.
	for _, f := range SiteFiles() {
		writeFile(t, dir, f, site("strata.job.last", f, "strata.job.seen."+f, "yes"))
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Get("strata.job.last"); got != "strata-site.xml" {
		t.Errorf("last = %q", got)
	}
	if len(c.Keys()) != 6 {
		t.Errorf("keys %q", c.Keys())
	}
	for i, f := range []string{"core-site.xml", "hdfs-site.xml", "mapred-site.xml", "yarn-site.xml"} {
		// Remove the files after f so f is the last one read.
		d := t.TempDir()
		for _, g := range SiteFiles()[:i+1] {
			writeFile(t, d, g, site("strata.job.last", g))
		}
		c, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Get("strata.job.last"); got != f {
			t.Errorf("with files up to %s: last = %q", f, got)
		}
	}

	// Missing files are skipped; an empty dir name loads nothing.
	c, err = Load(t.TempDir())
	if err != nil || len(c.Keys()) != 0 {
		t.Errorf("empty dir: %v %q", err, c.Keys())
	}
	if c, err := Load(""); err != nil || len(c.Keys()) != 0 {
		t.Errorf(`Load(""): %v`, err)
	}
	// A missing or non-directory dir is an error.
	if _, err := Load(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "core-site.xml")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as dir: %v", err)
	}
	// A malformed site file names itself.
	bad := t.TempDir()
	writeFile(t, bad, "core-site.xml", site("strata.job.a", "1"))
	writeFile(t, bad, "hdfs-site.xml", "<configuration><property>")
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "hdfs-site.xml")+": XML syntax error") {
		t.Errorf("malformed site file: %v", err)
	}
	if err := New().LoadFile(filepath.Join(bad, "nope.xml")); err == nil || !strings.Contains(err.Error(), "nope.xml") {
		t.Errorf("LoadFile(missing) = %v", err)
	}
}

func TestConfigDir(t *testing.T) {
	tests := []struct {
		explicit, strata, hadoop, want string
	}{
		{"", "", "", ""},
		{"/x", "/s", "/h", "/x"},
		{"", "/s", "/h", "/s"},
		{"", "", "/h", "/h"},
		{"", "/s", "", "/s"},
	}
	for _, tt := range tests {
		t.Setenv("STRATA_CONF_DIR", tt.strata)
		t.Setenv("HADOOP_CONF_DIR", tt.hadoop)
		if got := ConfigDir(tt.explicit); got != tt.want {
			t.Errorf("ConfigDir(%q) with STRATA_CONF_DIR=%q HADOOP_CONF_DIR=%q = %q, want %q",
				tt.explicit, tt.strata, tt.hadoop, got, tt.want)
		}
	}
}

func TestWriteXMLRoundTrip(t *testing.T) {
	c := New()
	if err := c.LoadReader(strings.NewReader(site("dfs.replication", "2")), "a.xml"); err != nil {
		t.Fatal(err)
	}
	c.LoadReader(strings.NewReader(`<configuration><property><name>dfs.blocksize</name><value>64m</value><final>true</final></property></configuration>`), "b.xml")
	c.Set("strata.job.text", "  <a & b>\n\t\"c\"\r ${dfs.replication} ")
	c.Set("strata.job.empty", "")
	var buf bytes.Buffer
	if err := c.WriteXML(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "<name>dfs.replication</name><value>2</value><source>a.xml</source>") {
		t.Errorf("source not written:\n%s", out)
	}
	d := New()
	if err := d.LoadReader(&buf, "job.xml"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !slices.Equal(c.Keys(), d.Keys()) {
		t.Fatalf("keys %q != %q", d.Keys(), c.Keys())
	}
	for _, k := range c.Keys() {
		if c.GetRaw(k) != d.GetRaw(k) {
			t.Errorf("%s: %q != %q", k, d.GetRaw(k), c.GetRaw(k))
		}
	}
	if !d.IsFinal("dfs.blocksize") || d.IsFinal("dfs.replication") {
		t.Error("final marks not written")
	}
}
