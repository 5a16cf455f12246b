package jobtracker

import (
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
)

// base is a configuration a JobTracker can start with: it needs an
// address.
func base() *conf.Configuration {
	c := conf.New()
	c.Set(keyAddress, "127.0.0.1:9001")
	return c
}

// configFrom is ConfigFrom without the configuration it keeps for the
// history's file system (a pointer, different in every call).
func configFrom(c *conf.Configuration) (Config, error) {
	cfg, err := ConfigFrom(c)
	cfg.HistoryConf = nil
	return cfg, err
}

func TestConfigDefaults(t *testing.T) {
	want := DefaultConfig()
	want.Addr, want.HistoryConf = "127.0.0.1:9001", nil
	conftest.CheckDefaults(t, configFrom, base, want)
	if d := DefaultConfig(); d.HeartbeatInterval != time.Second || d.TrackerExpiry != 10*time.Minute || d.RetiredJobs != 1000 || d.Addr != "local" ||
		!d.ACLsEnabled || d.Admins.Allows("alice", []string{"supergroup"}) {
		t.Errorf("DefaultConfig %+v is not Hadoop's", d)
	}
}

func TestConfigMapping(t *testing.T) {
	conftest.CheckMapping(t, configFrom, base, map[string]string{
		"hadoop.security.authentication":            "kerberos",
		keyAddress:                                  "10.1.1.1:8021",
		keyHeartbeatInterval:                        "300",
		keyTrackerExpiry:                            "60000",
		keyRetiredJobs:                              "5",
		keyHistoryDir:                               "hdfs://nn:8020/history",
		keyACLsEnabled:                              "false",
		keyAdmins:                                   "root admins",
		keyHTTPAddress:                              "10.1.1.1:50031",
		"strata.http.pprof.enabled":                 "true",
		"hadoop.security.sensitive-config-keys":     "token$",
		"ipc.client.connection.maxidletime":         "5000",
		"ipc.client.idlethreshold":                  "10",
		"ipc.maximum.data.length":                   "1048576",
		"ipc.server.max.connections":                "100",
		"strata.ipc.server.connection.max-inflight": "8",
		"strata.ipc.server.handlers.max":            "64",
		"strata.ipc.server.write.timeout":           "5000",

		// secure-mode HTTP authentication (httpauth)
		"hadoop.http.authentication.type":                     "kerberos",
		"hadoop.http.authentication.simple.anonymous.allowed": "false",
		"hadoop.http.authentication.kerberos.principal":       "HTTP/jt.example@EXAMPLE.COM",
		"hadoop.http.authentication.kerberos.keytab":          "/etc/http.keytab",
		"hadoop.http.authentication.token.validity":           "60",
		"hadoop.http.authentication.signature.secret.file":    "/etc/http.secret",
		"hadoop.http.authentication.cookie.domain":            "example.com",
		"hadoop.http.authentication.cookie.path":              "/x",
	})
}

// TestConfigValidate: each bad setting is refused with the key named.
func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	good.Addr = "127.0.0.1:0"
	if err := good.Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no address", func(c *Config) { c.Addr = "" }, "set mapreduce.jobtracker.address (host:port)"},
		{"local", func(c *Config) { c.Addr = "local" }, "set mapreduce.jobtracker.address"},
		{"zero heartbeat", func(c *Config) { c.HeartbeatInterval = 0 }, "mapreduce.jobtracker.heartbeat.interval must be positive, got 0s"},
		{"negative heartbeat", func(c *Config) { c.HeartbeatInterval = -time.Second }, "heartbeat.interval must be positive"},
		{"expiry within a heartbeat", func(c *Config) { c.TrackerExpiry = time.Second },
			"mapreduce.jobtracker.expire.trackers.interval (1s) must be longer than mapreduce.jobtracker.heartbeat.interval (1s)"},
		{"zero expiry", func(c *Config) { c.TrackerExpiry = 0 }, "expire.trackers.interval (0s) must be longer"},
		{"no retired jobs", func(c *Config) { c.RetiredJobs = 0 }, "mapreduce.jobtracker.retiredjobs.cache.size must be at least 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "jobtracker: ") {
				t.Fatalf("Validate = %v, want an error with %q", err, tc.want)
			}
		})
	}
	// Start refuses what Validate refuses, before it listens.
	bad := good
	bad.RetiredJobs = 0
	if err := New(bad).Start(); err == nil || !strings.Contains(err.Error(), "retiredjobs") {
		t.Fatalf("Start with a bad config: %v", err)
	}
	// ConfigFrom validates too.
	c := base()
	c.Set(keyHeartbeatInterval, "0")
	if _, err := ConfigFrom(c); err == nil || !strings.Contains(err.Error(), "heartbeat.interval must be positive") {
		t.Fatalf("ConfigFrom with a zero heartbeat: %v", err)
	}
}

// TestConfigHTTPFreePort: a JobTracker on a free RPC port takes a free
// web UI port unless the key names one; on a fixed port it keeps
// Hadoop's 50030.
func TestConfigHTTPFreePort(t *testing.T) {
	c := base()
	if cfg, _ := ConfigFrom(c); cfg.HTTPAddr != "127.0.0.1:50030" {
		t.Errorf("fixed RPC port: web UI %s", cfg.HTTPAddr)
	}
	c.Set(keyAddress, "127.0.0.1:0")
	if cfg, _ := ConfigFrom(c); cfg.HTTPAddr != "127.0.0.1:0" {
		t.Errorf("free RPC port: web UI %s", cfg.HTTPAddr)
	}
	c.Set(keyHTTPAddress, "127.0.0.1:50031")
	if cfg, _ := ConfigFrom(c); cfg.HTTPAddr != "127.0.0.1:50031" {
		t.Errorf("free RPC port, web UI set: %s", cfg.HTTPAddr)
	}
}
