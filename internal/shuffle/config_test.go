package shuffle

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
	"github.com/stratafs/strata/internal/spill"
)

func TestConfigDefaults(t *testing.T) {
	conftest.CheckDefaults(t, ConfigFrom, nil, DefaultConfig())
	d := DefaultConfig()
	// The exported constants are the table's values.
	if d.ParallelCopies != DefaultParallelCopies || d.MemoryLimitPercent != DefaultMemoryLimitPercent ||
		d.MergePercent != DefaultMergePercent || d.SortFactor != DefaultSortFactor || d.ConnectTimeout != DefaultConnectTimeout ||
		d.ReadTimeout != DefaultReadTimeout || d.MemoryBudget != DefaultMemoryBudget || d.Retries != DefaultRetries ||
		d.RetryBackoff != DefaultRetryBackoff || d.MaxBackoff != DefaultMaxBackoff || d.Codec != spill.None {
		t.Fatalf("DefaultConfig %+v disagrees with the Default constants", d)
	}
}

func TestConfigMapping(t *testing.T) {
	alt := map[string]string{
		KeyParallelCopies:     "9",
		KeyMemoryLimitPercent: "0.1",
		KeyMergePercent:       "0.9",
		KeySortFactor:         "30",
		KeyConnectTimeout:     "1000",
		KeyReadTimeout:        "2000",
		spill.KeyCompress:     "true",
	}
	conftest.CheckMapping(t, ConfigFrom, nil, alt)
	on := func() *conf.Configuration { c := conf.New(); c.Set(spill.KeyCompress, "true"); return c }
	alt[spill.KeyCompress] = "false"
	alt[spill.KeyCodec] = "lz4"
	conftest.CheckMapping(t, ConfigFrom, on, alt)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"no job", func(c *Config) { c.JobID = "" }, "no job ID"},
		{"no secret", func(c *Config) { c.Secret = nil }, "no job token"},
		{"negative reduce", func(c *Config) { c.Reduce = -1 }, "negative"},
		{"bad name", func(c *Config) { c.Name = ".." }, "attempt name"},
		{"copies", func(c *Config) { c.ParallelCopies = 0 }, KeyParallelCopies},
		{"budget", func(c *Config) { c.MemoryBudget = -1 }, "memory budget"},
		{"merge percent", func(c *Config) { c.MergePercent = 1.1 }, KeyMergePercent},
		{"limit above merge", func(c *Config) { c.MemoryLimitPercent = 0.7 }, KeyMemoryLimitPercent},
		{"sort factor", func(c *Config) { c.SortFactor = 1 }, KeySortFactor},
		{"negative timeout", func(c *Config) { c.ReadTimeout = -1 }, "negative timeout"},
		{"codec", func(c *Config) { c.Codec = "brotli" }, "codec"},
	} {
		c := DefaultConfig()
		c.JobID, c.Name, c.Secret = "job_1", "attempt_r_0", []byte("s")
		tc.change(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if c := (Config{}).withDefaults(); c.ParallelCopies != DefaultParallelCopies || c.ReadTimeout != DefaultReadTimeout || c.Retries != DefaultRetries {
		t.Fatalf("withDefaults = %+v", c)
	}
}
