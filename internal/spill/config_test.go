package spill

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
)

func TestConfigDefaults(t *testing.T) {
	conftest.CheckDefaults(t, ConfigFrom, nil, DefaultConfig())
	d := DefaultConfig()
	// The exported constants are the table's values.
	if d.SortBytes != DefaultSortBytes || d.SpillPercent != DefaultSpillPercent || d.SortFactor != DefaultSortFactor || d.Codec != None || d.Partitions != 1 {
		t.Fatalf("DefaultConfig %+v disagrees with the Default constants", d)
	}
}

func TestConfigMapping(t *testing.T) {
	conftest.CheckMapping(t, ConfigFrom, nil, map[string]string{
		KeySortMB:       "50",
		KeySpillPercent: "0.5",
		KeySortFactor:   "20",
		KeyCompress:     "true",
	})
	// The codec key is read only with compression on.
	on := func() *conf.Configuration { c := conf.New(); c.Set(KeyCompress, "true"); return c }
	conftest.CheckMapping(t, ConfigFrom, on, map[string]string{
		KeySortMB:       "50",
		KeySpillPercent: "0.5",
		KeySortFactor:   "20",
		KeyCompress:     "false",
		KeyCodec:        "org.apache.hadoop.io.compress.SnappyCodec",
	})
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"no partitions", func(c *Config) { c.Partitions = 0 }, "partitions"},
		{"small buffer", func(c *Config) { c.SortBytes = MinSortBytes - 1 }, KeySortMB},
		{"big buffer", func(c *Config) { c.SortBytes = MaxSortBytes + 1 }, KeySortMB},
		{"spill percent", func(c *Config) { c.SpillPercent = 1.5 }, KeySpillPercent},
		{"sort factor", func(c *Config) { c.SortFactor = 1 }, KeySortFactor},
		{"name", func(c *Config) { c.Name = "a/b" }, "attempt name"},
		{"no dirs", func(c *Config) { c.LocalDirs = nil }, "no local dirs"},
		{"codec", func(c *Config) { c.Codec = "brotli" }, "codec"},
	} {
		c := DefaultConfig()
		c.Name, c.LocalDirs = "attempt_1", []string{"/tmp"}
		tc.change(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if c := (Config{}).withDefaults(); c.SortBytes != DefaultSortBytes || c.SpillPercent != DefaultSpillPercent || c.SortFactor != DefaultSortFactor {
		t.Fatalf("withDefaults = %+v", c)
	}
}
