package fsdataset

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
	"github.com/stratafs/strata/internal/storage"
)

func TestConfigDefaults(t *testing.T) {
	want := DefaultConfig(nil)
	from := func(c *conf.Configuration) (Config, error) {
		cfg, err := ConfigFrom(c)
		cfg.Volumes = nil // DefaultConfig takes them as an argument
		return cfg, err
	}
	conftest.CheckDefaults(t, from, nil, want)
	if want.Choosing != RoundRobin || want.AvailableSpaceThreshold != 10<<30 || want.AvailableSpacePreference != 0.75 ||
		want.BytesPerChecksum != DefaultBytesPerChecksum || want.FailedVolumesTolerated != 0 || want.Reserved != 0 || want.DirectIO || want.DropBehindWrites {
		t.Fatalf("DefaultConfig = %+v", want)
	}
}

func TestConfigMapping(t *testing.T) {
	conftest.CheckMapping(t, ConfigFrom, nil, map[string]string{
		KeyDataDir:            "[SSD]/data/ssd",
		KeyFailedTolerated:    "-1",
		KeyChoosingPolicy:     AvailableSpace,
		KeyBalancedThreshold:  "1g",
		KeyBalancedPreference: "0.9",
		KeyReserved:           "5m",
		KeyDirectIO:           "true",
		KeyDropBehindWrites:   "true",
	})
}

func TestParseChoosingPolicy(t *testing.T) {
	for in, want := range map[string]string{
		"": RoundRobin, RoundRobin: RoundRobin, AvailableSpace: AvailableSpace,
		"org.apache.hadoop.hdfs.server.datanode.fsdataset.RoundRobinVolumeChoosingPolicy":     RoundRobin,
		"org.apache.hadoop.hdfs.server.datanode.fsdataset.AvailableSpaceVolumeChoosingPolicy": AvailableSpace,
	} {
		if got, err := ParseChoosingPolicy(in); got != want || err != nil {
			t.Errorf("ParseChoosingPolicy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseChoosingPolicy("random"); err == nil || !strings.Contains(err.Error(), KeyChoosingPolicy) {
		t.Errorf("ParseChoosingPolicy(random): %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	two := []VolumeConfig{{Path: "/a", Type: storage.Disk}, {Path: "/b", Type: storage.SSD}}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"no volumes", func(c *Config) { c.Volumes = nil }, "no volumes"},
		{"empty path", func(c *Config) { c.Volumes[1].Path = "" }, "empty path"},
		{"twice", func(c *Config) { c.Volumes[1].Path = "/a/" }, "listed twice"},
		{"tolerate all", func(c *Config) { c.FailedVolumesTolerated = 2 }, KeyFailedTolerated},
		{"tolerate -1", func(c *Config) { c.FailedVolumesTolerated = -1 }, ""},
		{"policy", func(c *Config) { c.Choosing = "random" }, "unknown volume choosing policy"},
		{"threshold", func(c *Config) { c.AvailableSpaceThreshold = -1 }, KeyBalancedThreshold},
		{"preference", func(c *Config) { c.AvailableSpacePreference = 1.01 }, KeyBalancedPreference},
		{"checksum chunk", func(c *Config) { c.BytesPerChecksum = maxBytesPerChecksum + 1 }, "bytes per checksum"},
		{"reserved", func(c *Config) { c.Reserved = -1 }, KeyReserved},
	} {
		c := DefaultConfig(append([]VolumeConfig(nil), two...))
		tc.change(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	// Zero fields take the defaults before Validate.
	c := Config{Volumes: two}.withDefaults()
	d := DefaultConfig(nil)
	if c.Choosing != d.Choosing || c.AvailableSpaceThreshold != d.AvailableSpaceThreshold ||
		c.AvailableSpacePreference != d.AvailableSpacePreference || c.BytesPerChecksum != d.BytesPerChecksum || c.FS == nil || c.Logger == nil {
		t.Fatalf("withDefaults = %+v", c)
	}
}
