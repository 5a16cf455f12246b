package conf

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzLoadXML feeds arbitrary bytes to the XML loader. It must never
// panic, must leave the configuration unchanged on error, and what it
// loads must survive WriteXML and a reload.
func FuzzLoadXML(f *testing.F) {
	for _, s := range []string{
		"",
		"<configuration/>",
		site("dfs.replication", "2", "fs.default.name", "hdfs://x", "a.b", "${a.b}${dfs.replication}"),
		`<configuration><property name="n" value="v" final="true"/><configuration><property><name>x</name></property></configuration></configuration>`,
		`<?xml version="1.0" encoding="ISO-8859-1"?><configuration><property><name>k</name><value>` + "\xe9" + `</value><final>true</final></property></configuration>`,
		`<configuration><property><name>a</name><value><![CDATA[x]]>&amp;&#10;</value></property></configuration>`,
		"<configuration><property>",
		`<configuration><xi:include href="x"/></configuration>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New()
		c.Set("strata.job.sentinel", "s")
		if err := c.LoadReader(bytes.NewReader(data), "fuzz.xml"); err != nil {
			if !slices.Equal(c.Keys(), []string{"strata.job.sentinel"}) {
				t.Fatalf("failed load changed keys: %q", c.Keys())
			}
			return
		}
		for _, k := range c.Keys() {
			_ = c.Get(k) // exercise expansion
			_, _ = c.GetBytes(k)
		}
		_ = c.Unknown()
		var buf bytes.Buffer
		if err := c.WriteXML(&buf); err != nil {
			t.Fatal(err)
		}
		d := New()
		if err := d.LoadReader(bytes.NewReader(buf.Bytes()), "round.xml"); err != nil {
			t.Fatalf("reload: %v\n%s", err, buf.Bytes())
		}
		if !slices.Equal(c.Keys(), d.Keys()) {
			t.Fatalf("reload keys %q, want %q", d.Keys(), c.Keys())
		}
		for _, k := range c.Keys() {
			if c.GetRaw(k) != d.GetRaw(k) || (c.IsFinal(k) != d.IsFinal(k)) {
				t.Fatalf("%q: reload %q final %v, want %q final %v", k, d.GetRaw(k), d.IsFinal(k), c.GetRaw(k), c.IsFinal(k))
			}
		}
	})
}
