package datanode

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/storage"
)

// from is ConfigFrom with a fixed NameNode address, in conftest's shape.
func from(c *conf.Configuration) (Config, error) { return ConfigFrom(c, "nn:8020") }

func TestConfigDefaults(t *testing.T) {
	want := DefaultConfig()
	want.NameNodeAddr, want.NameNodeAddrs = "nn:8020", []string{"nn:8020"}
	conftest.CheckDefaults(t, from, nil, want)
	// Spot-check that the table's values arrive with their units.
	d := DefaultConfig()
	if d.HeartbeatInterval != 3*time.Second || d.BlockReportInterval != 6*time.Hour || d.MaxTransferThreads != 4096 || d.Readahead != 4<<20 ||
		d.SocketKeepalive != 4*time.Second || d.SocketTimeout != 60*time.Second || d.SocketWriteTimeout != 480*time.Second || d.ScanPeriod != 504*time.Hour || d.ScanBytesPerSecond != 1<<20 ||
		d.VolumeChoosing != fsdataset.RoundRobin || d.XferAddr != "127.0.0.1:9866" || d.HTTPAddr != "127.0.0.1:9864" {
		t.Fatalf("DefaultConfig = %+v", d)
	}
}

// haMembers defines nameservice ns1 without listing it in
// dfs.nameservices: setting that key turns it on.
func haMembers() *conf.Configuration {
	c := conf.New()
	c.Set(nameservice.PrefixNameNodes+"ns1", "nn1,nn2")
	c.Set(nameservice.PrefixRPCAddress+"ns1.nn1", "h1:8020")
	c.Set(nameservice.PrefixRPCAddress+"ns1.nn2", "h2:8020")
	return c
}

func TestConfigMapping(t *testing.T) {
	conftest.CheckMapping(t, from, haMembers, map[string]string{
		"hadoop.security.authentication": "kerberos",
		nameservice.KeyNameservices:      "ns1",
		fsdataset.KeyDataDir:             "[SSD]/data/ssd,/data/disk",
		fsdataset.KeyFailedTolerated:     "1",
		fsdataset.KeyDirectIO:            "true",
		fsdataset.KeyDropBehindWrites:    "true",
		fsdataset.KeyReserved:            "1g",
		fsdataset.KeyChoosingPolicy:      "org.apache.hadoop.hdfs.server.datanode.fsdataset.AvailableSpaceVolumeChoosingPolicy",
		fsdataset.KeyBalancedThreshold:   "1g",
		fsdataset.KeyBalancedPreference:  "0.5",
		keyAddress:                       "127.0.0.1:1",
		keyHTTPAddress:                   "127.0.0.1:2",
		keyDomainSocket:                  "/run/dn._PORT",
		keyHeartbeat:                     "7",
		keyBlockReport:                   "1000",
		keyMaxTransfer:                   "10",
		keyScanPeriod:                    "-1",
		keyScanBytesPerSecond:            "2m",
		keyKeepalive:                     "100",
		keySocketTimeout:                 "1500",
		keyWriteTimeout:                  "2500",
		keyBlockTokens:                   "true",
		"strata.http.pprof.enabled":      "true",
		keyHostname:                      "dn3.example",
		keySlaveHostName:                 "node3.example",
		keyDNSInterface:                  "eth0",
		keyUseDNHostname:                 "true",
		keyNameNodeHTTP:                  "nn.example:9870",
		keyCORSOrigins:                   "https://gw.example:8443",
		keyBalanceBandwidth:              "10m",
		keyBalanceMoves:                  "7",
		keyDataTransferProtection:        "integrity,privacy",
		keyEncryptDataTransfer:           "true",
		keyEncryptAlgorithm:              "rc4",
		keyEncryptCipherSuites:           "AES/CTR/NoPadding",
		keyEncryptKeyBits:                "256",
		keyReadahead:                     "1m",

		// secure-mode HTTP authentication (httpauth)
		"hadoop.http.authentication.type":                     "kerberos",
		"hadoop.http.authentication.simple.anonymous.allowed": "false",
		"hadoop.http.authentication.kerberos.principal":       "HTTP/dn.example@EXAMPLE.COM",
		"hadoop.http.authentication.kerberos.keytab":          "/etc/http.keytab",
		"hadoop.http.authentication.token.validity":           "60",
		"hadoop.http.authentication.signature.secret.file":    "/etc/http.secret",
		"hadoop.http.authentication.cookie.domain":            "example.com",
		"hadoop.http.authentication.cookie.path":              "/x",
	})
}

// TestConfigNameNodes checks which NameNodes ConfigFrom finds: every
// member of the nameservice when dfs.nameservices lists one, whatever the
// argument; the one fs.defaultFS or the argument names among several;
// else the argument, resolved as an hdfs:// authority.
func TestConfigNameNodes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      map[string]string
		arg      string
		want     []string
		wantErr  string
		noHAKeys bool
	}{
		{name: "one namenode", arg: "nn:8020", want: []string{"nn:8020"}},
		{name: "host without port", arg: "nn", want: []string{"nn:8020"}},
		{name: "nameservice listed", set: map[string]string{nameservice.KeyNameservices: "ns1"}, arg: "ns1:8020", want: []string{"h1:8020", "h2:8020"}},
		{name: "nameservice as argument", set: map[string]string{nameservice.KeyNameservices: "ns1"}, arg: "ns1", want: []string{"h1:8020", "h2:8020"}},
		{name: "listed without members", set: map[string]string{nameservice.KeyNameservices: "ns1"}, arg: "nn:8020", want: []string{"nn:8020"}, noHAKeys: true},
		{name: "several, defaultFS names one", set: map[string]string{nameservice.KeyNameservices: "ns0,ns1", keyDefaultFS: "hdfs://ns1/"}, arg: "ns1:8020", want: []string{"h1:8020", "h2:8020"}},
		{name: "several, none named", set: map[string]string{nameservice.KeyNameservices: "ns0,ns1"}, arg: "nn:8020", wantErr: "federation"},
		{name: "member without address", set: map[string]string{nameservice.KeyNameservices: "ns1", nameservice.PrefixNameNodes + "ns1": "nn1,nn3"}, arg: "ns1", wantErr: "nn3"},
	} {
		c := haMembers()
		if tc.noHAKeys {
			c = conf.New()
		}
		for k, v := range tc.set {
			c.Set(k, v)
		}
		cfg, err := ConfigFrom(c, tc.arg)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !slices.Equal(cfg.NameNodeAddrs, tc.want) || cfg.NameNodeAddr != tc.want[0]:
			t.Errorf("%s: NameNodeAddrs %v, NameNodeAddr %s; want %v", tc.name, cfg.NameNodeAddrs, cfg.NameNodeAddr, tc.want)
		}
	}
}

func TestConfigFromErrors(t *testing.T) {
	c := conf.New()
	c.Set(fsdataset.KeyChoosingPolicy, "random")
	c.Set(keyMaxTransfer, "many")
	_, err := ConfigFrom(c, "nn:8020")
	if err == nil || !strings.Contains(err.Error(), fsdataset.KeyChoosingPolicy) || !strings.Contains(err.Error(), "many") {
		t.Fatalf("ConfigFrom with two bad values: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.NameNodeAddr = "nn:8020"
		c.Volumes = []fsdataset.VolumeConfig{{Path: "/a", Type: storage.Disk}, {Path: "/b", Type: storage.SSD}}
		return c
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no volumes", func(c *Config) { c.Volumes = nil }, fsdataset.KeyDataDir},
		{"no namenode", func(c *Config) { c.NameNodeAddr = "" }, "NameNode address"},
		{"namenodes", func(c *Config) { c.NameNodeAddr, c.NameNodeAddrs = "", []string{"a:1", "b:1"} }, ""},
		{"first namenode differs", func(c *Config) { c.NameNodeAddrs = []string{"a:1", "b:1"} }, "first"},
		{"namenode twice", func(c *Config) { c.NameNodeAddr, c.NameNodeAddrs = "a:1", []string{"a:1", "a:1"} }, "twice"},
		{"too many namenodes", func(c *Config) {
			c.NameNodeAddr, c.NameNodeAddrs = "", []string{"1:1", "2:1", "3:1", "4:1", "5:1", "6:1", "7:1", "8:1"}
		}, "at most"},
		{"negative heartbeat", func(c *Config) { c.HeartbeatInterval = -time.Second }, keyHeartbeat},
		{"heartbeat from namenode", func(c *Config) { c.HeartbeatInterval = 0 }, ""},
		{"zero block report", func(c *Config) { c.BlockReportInterval = 0 }, keyBlockReport},
		{"zero transfer threads", func(c *Config) { c.MaxTransferThreads = 0 }, keyMaxTransfer + " must be at least 1, got 0"},
		{"tolerate all volumes", func(c *Config) { c.FailedVolumesTolerated = 2 }, fsdataset.KeyFailedTolerated},
		{"tolerate below -1", func(c *Config) { c.FailedVolumesTolerated = -2 }, fsdataset.KeyFailedTolerated},
		{"tolerate while one works", func(c *Config) { c.FailedVolumesTolerated = -1 }, ""},
		{"negative reserved", func(c *Config) { c.Reserved = -1 }, fsdataset.KeyReserved},
		{"negative balanced threshold", func(c *Config) { c.AvailableSpaceThreshold = -1 }, fsdataset.KeyBalancedThreshold},
		{"preference above 1", func(c *Config) { c.AvailableSpacePreference = 1.5 }, fsdataset.KeyBalancedPreference},
		{"unknown policy", func(c *Config) { c.VolumeChoosing = "random" }, fsdataset.KeyChoosingPolicy},
		{"negative scan rate", func(c *Config) { c.ScanBytesPerSecond = -1 }, keyScanBytesPerSecond},
		{"scanner off", func(c *Config) { c.ScanPeriod = -1 }, ""},
		{"negative keepalive", func(c *Config) { c.SocketKeepalive = -1 }, keyKeepalive},
		{"negative socket timeout", func(c *Config) { c.SocketTimeout = -1 }, keySocketTimeout},
		{"negative write timeout", func(c *Config) { c.SocketWriteTimeout = -1 }, keyWriteTimeout},
	} {
		c := base()
		tc.change(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestNewFillsZeroFieldsAndValidates checks New's contract for a
// hand-built Config: the "0 means the default" fields get DefaultConfig's
// values, and what is out of range is refused before any volume opens.
func TestNewFillsZeroFieldsAndValidates(t *testing.T) {
	dir := t.TempDir()
	vols := []fsdataset.VolumeConfig{{Path: filepath.Join(dir, "v"), Type: storage.Disk}}
	dn, err := New(Config{Volumes: vols, NameNodeAddr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	got := dn.cfg
	if got.MaxTransferThreads != d.MaxTransferThreads || got.BlockReportInterval != d.BlockReportInterval ||
		got.SocketKeepalive != d.SocketKeepalive || got.ScanPeriod != d.ScanPeriod || got.ScanBytesPerSecond != d.ScanBytesPerSecond ||
		got.VolumeChoosing != d.VolumeChoosing || got.User == "" || got.Logger == nil || dn.heartbeat != defaultHeartbeat {
		t.Fatalf("New left defaults unset: %+v", got)
	}
	dn.Close()
	_, err = New(Config{Volumes: vols, NameNodeAddr: "127.0.0.1:1", MaxTransferThreads: -1})
	if err == nil || !strings.Contains(err.Error(), keyMaxTransfer) {
		t.Fatalf("New with -1 transfer threads: %v", err)
	}
}

// Data transfer protection needs block tokens, and only what is
// implemented is accepted.
func TestSASLConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		s      SASLConfig
		tokens bool
		ok     bool
	}{
		{SASLConfig{}, false, true},
		{SASLConfig{QOPs: []string{"auth"}}, true, true},
		{SASLConfig{QOPs: []string{"auth"}}, false, false},
		{SASLConfig{Encrypt: true}, false, false},
		{SASLConfig{Encrypt: true, Algorithm: "3des"}, true, false},
		{SASLConfig{Encrypt: true, CipherSuites: "AES/GCM"}, true, false},
		{SASLConfig{Encrypt: true, CipherSuites: "AES/CTR/NoPadding", KeyBits: 100}, true, false},
	} {
		if err := tc.s.validate(tc.tokens); (err == nil) != tc.ok {
			t.Errorf("%+v tokens=%v: %v", tc.s, tc.tokens, err)
		}
	}
	c := conf.New()
	c.Set(keyDataTransferProtection, "secret")
	if _, err := from(c); err == nil || !strings.Contains(err.Error(), "unknown value") {
		t.Errorf("bad protection: %v", err)
	}
}
