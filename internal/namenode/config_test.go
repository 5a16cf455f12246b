package namenode

import (
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
)

func baseConf() *conf.Configuration {
	c := conf.New()
	c.Set("dfs.namenode.name.dir", "file:///data/nn")
	return c
}

func TestConfigDefaults(t *testing.T) {
	want := DefaultConfig()
	want.NameDir, want.NameDirs = "/data/nn", []string{"/data/nn"}
	conftest.CheckDefaults(t, ConfigFrom, baseConf, want)
	if err := want.Validate(); err != nil {
		t.Errorf("defaults with a storage directory do not validate: %v", err)
	}
	// The Hadoop defaults the rest of strata relies on.
	d := DefaultConfig()
	if d.NameDir != "" || d.RPCAddr != "127.0.0.1:8020" || d.DefaultReplication != 3 || d.DefaultBlockSize != 128<<20 ||
		d.HeartbeatExpiry != 630*time.Second || d.SafeModeThreshold != 0.999 || d.Superuser == "" {
		t.Errorf("DefaultConfig = %+v", d)
	}
}

func TestConfigMapping(t *testing.T) {
	// ns1 is described but not listed in dfs.nameservices: listing it
	// (the mapped value below) makes this NameNode its member nn1.
	base := func() *conf.Configuration {
		c := baseConf()
		c.Set("dfs.ha.namenodes.ns1", "nn1")
		c.Set("dfs.namenode.rpc-address.ns1.nn1", "127.0.0.1:8020")
		c.Set("dfs.ha.namenode.id", "nn1")
		return c
	}
	conftest.CheckMapping(t, ConfigFrom, base, map[string]string{
		"hadoop.security.authentication":                  "kerberos",
		"dfs.nameservices":                                "ns1",
		"dfs.namenode.name.dir":                           "/other",
		"dfs.namenode.rpc-address":                        "10.1.1.1:9000",
		"fs.defaultFS":                                    "hdfs://nn.example:9001",
		"dfs.namenode.http-address":                       "",
		"dfs.permissions.superusergroup":                  "admins",
		"dfs.permissions.enabled":                         "false",
		"dfs.encrypt.data.transfer":                       "true",
		"dfs.encrypt.data.transfer.algorithm":             "rc4",
		"dfs.replication":                                 "2",
		"dfs.replication.max":                             "10",
		"dfs.namenode.replication.min":                    "2",
		"dfs.blocksize":                                   "64m",
		"dfs.namenode.fs-limits.min-block-size":           "1024",
		"dfs.bytes-per-checksum":                          "1024",
		"io.file.buffer.size":                             "65536",
		"dfs.namenode.fs-limits.max-component-length":     "0",
		"dfs.namenode.fs-limits.max-directory-items":      "100",
		"dfs.ls.limit":                                    "10",
		"ipc.maximum.data.length":                         "1048576",
		"dfs.namenode.checkpoint.period":                  "60",
		"dfs.namenode.checkpoint.txns":                    "10",
		"dfs.heartbeat.interval":                          "1",
		"dfs.namenode.heartbeat.recheck-interval":         "1000",
		"dfs.namenode.redundancy.interval.seconds":        "1",
		"dfs.namenode.replication.max-streams":            "4",
		"dfs.namenode.reconstruction.pending.timeout-sec": "10",
		"dfs.namenode.safemode.threshold-pct":             "0.5",
		"dfs.namenode.safemode.extension":                 "0",
		"hadoop.http.idle_timeout.ms":                     "1000",
		"strata.http.pprof.enabled":                       "true",
		"ipc.server.max.connections":                      "10",
		"ipc.client.connection.maxidletime":               "1000",
		"ipc.client.idlethreshold":                        "10",
		"strata.ipc.server.handlers.max":                  "16",
		"strata.ipc.server.connection.max-inflight":       "8",
		"strata.ipc.server.write.timeout":                 "1000",
		"dfs.block.access.token.enable":                   "true",
		"dfs.block.access.key.update.interval":            "10",
		"dfs.block.access.token.lifetime":                 "10",
		"fs.trash.interval":                               "60",
		"fs.trash.checkpoint.interval":                    "15",
		"dfs.namenode.enable.retrycache":                  "false",
		"dfs.namenode.retrycache.expirytime.millis":       "1000",
		"dfs.namenode.retrycache.heap.percent":            "0.5",
		"dfs.namenode.xattrs.enabled":                     "false",
		"dfs.namenode.acls.enabled":                       "false",
		"dfs.namenode.posix.acl.inheritance.enabled":      "false",
		"dfs.namenode.fs-limits.max-xattrs-per-inode":     "4",
		"dfs.namenode.fs-limits.max-xattr-size":           "100",
		"dfs.hosts":                                       "/etc/strata/dfs.include",
		"dfs.hosts.exclude":                               "/etc/strata/dfs.exclude",
		"dfs.namenode.hosts.provider.classname":           "org.apache.hadoop.hdfs.server.blockmanagement.CombinedHostFileManager",
		"dfs.namenode.maintenance.replication.min":        "2",
		"net.topology.node.switch.mapping.impl":           "org.apache.hadoop.net.TableMapping",
		"net.topology.script.file.name":                   "/etc/strata/topology.sh",
		"net.topology.script.number.args":                 "10",
		"net.topology.table.file.name":                    "/etc/strata/topology.table",
		"dfs.snapshotdiff-report.limit":                   "5",
		"strata.namenode.snapshot.max-copied-inodes":      "10",
		"strata.namenode.snapshot.max-total-inodes":       "20",
		// Delegation tokens (delegation.go); hadoop.security.authentication is above.
		"dfs.namenode.delegation.token.always-use":     "true",
		"dfs.namenode.delegation.key.update-interval":  "1000",
		"dfs.namenode.delegation.token.max-lifetime":   "5000",
		"dfs.namenode.delegation.token.renew-interval": "2000",
		"hadoop.security.auth_to_local":                `RULE:[1:$1@$0](.*@P\.TEST)s/@.*// DEFAULT`,
		"hadoop.security.auth_to_local.mechanism":      "mit",
		"dfs.namenode.kerberos.principal":              "nn/_HOST@EXAMPLE.COM",
		"dfs.namenode.keytab.file":                     "/etc/security/nn.keytab",

		// secure-mode HTTP authentication (httpauth)
		"hadoop.http.authentication.type":                     "kerberos",
		"hadoop.http.authentication.simple.anonymous.allowed": "false",
		"hadoop.http.authentication.kerberos.principal":       "HTTP/nn.example@EXAMPLE.COM",
		"hadoop.http.authentication.kerberos.keytab":          "/etc/http.keytab",
		"hadoop.http.authentication.token.validity":           "60",
		"hadoop.http.authentication.signature.secret.file":    "/etc/http.secret",
		"hadoop.http.authentication.cookie.domain":            "example.com",
		"hadoop.http.authentication.cookie.path":              "/webhdfs",
	})
}

func TestConfigFromErrors(t *testing.T) {
	for key, value := range map[string]string{
		"dfs.replication":                      "three",
		"dfs.blocksize":                        "big",
		"dfs.permissions.enabled":              "maybe",
		"dfs.namenode.safemode.extension":      "soon",
		"dfs.namenode.safemode.threshold-pct":  "most",
		"dfs.namenode.replication.max-streams": "",
		"dfs.block.access.token.enable":        "yes please",
		"ipc.server.max.connections":           "-1",
	} {
		c := baseConf()
		c.Set(key, value)
		if _, err := ConfigFrom(c); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: error %v does not name the key", key, value, err)
		}
	}
	c := baseConf()
	c.Set("dfs.namenode.name.dir", " , ")
	if _, err := ConfigFrom(c); err == nil {
		t.Error("empty dfs.namenode.name.dir accepted")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // substring of the error; "" for valid
	}{
		{"defaults", func(c *Config) {}, ""},
		{"no storage directory", func(c *Config) { c.NameDir = "" }, "dfs.namenode.name.dir"},
		{"no RPC address", func(c *Config) { c.RPCAddr = "" }, "dfs.namenode.rpc-address"},
		{"no superuser", func(c *Config) { c.Superuser = "" }, "superuser"},
		{"snapshot total below one copy", func(c *Config) { c.SnapshotMaxTotalInodes = c.SnapshotMaxCopied - 1 }, "strata.namenode.snapshot.max-total-inodes"},
		{"replication 0", func(c *Config) { c.DefaultReplication = 0 }, "dfs.replication must be between 1 and"},
		{"replication above max", func(c *Config) { c.DefaultReplication = 600 }, "dfs.replication must be between 1 and dfs.replication.max (512), got 600"},
		{"max replication 0", func(c *Config) { c.MaxReplication = 0 }, "dfs.replication.max must be at least 1, got 0"},
		{"delegation key interval 0", func(c *Config) { c.Delegation.AlwaysUse = true; c.Delegation.Timing.KeyUpdateInterval = 0 }, "dfs.namenode.delegation.key.update-interval must be positive, got 0"},
		{"delegation max lifetime negative", func(c *Config) { c.Delegation.AlwaysUse = true; c.Delegation.Timing.MaxLifetime = -1 }, "dfs.namenode.delegation.token.max-lifetime must be positive, got -1"},
		{"delegation renew interval 0", func(c *Config) { c.Delegation.Security = true; c.Delegation.Timing.RenewInterval = 0 }, "dfs.namenode.delegation.token.renew-interval must be positive, got 0"},
		{"min replication 0", func(c *Config) { c.MinReplication = 0 }, "dfs.namenode.replication.min"},
		{"block size 0", func(c *Config) { c.DefaultBlockSize = 0 }, "dfs.blocksize must be at least 1"},
		{"block size below minimum", func(c *Config) { c.DefaultBlockSize = 512 }, "dfs.namenode.fs-limits.min-block-size"},
		{"block size not a checksum multiple", func(c *Config) { c.DefaultBlockSize = 2<<20 + 100 }, "multiple of dfs.bytes-per-checksum"},
		{"bytes per checksum 0", func(c *Config) { c.BytesPerChecksum = 0 }, "dfs.bytes-per-checksum"},
		{"negative min block size", func(c *Config) { c.MinBlockSize = -1 }, "min-block-size must not be negative"},
		{"file buffer 0", func(c *Config) { c.FileBufferSize = 0 }, "io.file.buffer.size"},
		{"component length 0 disables", func(c *Config) { c.MaxComponentLength = 0 }, ""},
		{"negative component length", func(c *Config) { c.MaxComponentLength = -1 }, "max-component-length"},
		{"directory items 0", func(c *Config) { c.MaxDirItems = 0 }, "max-directory-items"},
		{"xattrs per inode 0 is fine", func(c *Config) { c.MaxXAttrsPerInode = 0 }, ""},
		{"negative xattrs per inode", func(c *Config) { c.MaxXAttrsPerInode = -1 },
			"Cannot set a negative limit on the number of xattrs per inode (dfs.namenode.fs-limits.max-xattrs-per-inode)."},
		{"xattr size 0", func(c *Config) { c.MaxXAttrSize = 0 }, "The maximum size of an xattr should be > 0: (dfs.namenode.fs-limits.max-xattr-size)."},
		{"negative xattr size", func(c *Config) { c.MaxXAttrSize = -1 }, "The maximum size of an xattr should be > 0: (dfs.namenode.fs-limits.max-xattr-size)."},
		{"xattr size above the hard limit", func(c *Config) { c.MaxXAttrSize = 32769 },
			"The maximum size of an xattr should be <= maximum size hard limit 32768: (dfs.namenode.fs-limits.max-xattr-size)."},
		{"xattr size at the hard limit", func(c *Config) { c.MaxXAttrSize = 32768 }, ""},
		{"list limit 0", func(c *Config) { c.ListLimit = 0 }, "dfs.ls.limit"},
		{"frame limit 0", func(c *Config) { c.MaxDataLength = 0 }, "ipc.maximum.data.length"},
		{"checkpoint period 0", func(c *Config) { c.CheckpointPeriod = 0 }, "dfs.namenode.checkpoint.period"},
		{"checkpoint txns 0", func(c *Config) { c.CheckpointTxns = 0 }, "dfs.namenode.checkpoint.txns"},
		{"hard lease below soft", func(c *Config) { c.LeaseHardLimit = time.Second }, "lease limits"},
		{"heartbeat 0", func(c *Config) { c.HeartbeatInterval = 0 }, "dfs.heartbeat.interval"},
		{"expiry 0", func(c *Config) { c.HeartbeatExpiry = 0 }, "heartbeat expiry"},
		{"replication interval 0", func(c *Config) { c.ReplicationInterval = 0 }, "redundancy.interval"},
		{"streams 0", func(c *Config) { c.MaxReplicationStreams = 0 }, "max-streams"},
		{"replication timeout 0", func(c *Config) { c.ReplicationTimeout = 0 }, "pending.timeout-sec"},
		{"safe mode extension 0 is fine", func(c *Config) { c.SafeModeExtension = 0 }, ""},
		{"negative safe mode extension", func(c *Config) { c.SafeModeExtension = -time.Second }, "safemode.extension"},
		{"threshold above 1 is fine", func(c *Config) { c.SafeModeThreshold = 2 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.NameDir = "/data/nn"
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			case err != nil && !strings.HasPrefix(err.Error(), "namenode: "):
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// dfs.namenode.name.dir is a list of paths and file:// URIs; every one is a
// storage directory.
func TestConfigNameDirs(t *testing.T) {
	c := baseConf()
	c.Set("dfs.namenode.name.dir", " file:///data/nn1, /data/nn2 ,file:///data/nn3")
	cfg, err := ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/data/nn1", "/data/nn2", "/data/nn3"}
	if cfg.NameDir != want[0] || strings.Join(cfg.NameDirs, ",") != strings.Join(want, ",") {
		t.Fatalf("NameDir %q, NameDirs %q", cfg.NameDir, cfg.NameDirs)
	}
	if got := cfg.StorageDirs(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("StorageDirs = %q", got)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"hdfs://nn/x", "qjournal://a:8485/ns", "file://"} {
		c.Set("dfs.namenode.name.dir", "/data/nn1,"+v)
		if _, err := ConfigFrom(c); err == nil || !strings.Contains(err.Error(), "dfs.namenode.name.dir") {
			t.Errorf("%q: %v", v, err)
		}
	}
	c.Set("dfs.namenode.name.dir", "/data/nn1,/data/nn2,file:///data/nn1/")
	cfg, err = ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a directory listed twice: %v", err)
	}
	// NameDir alone still names the one directory.
	d := DefaultConfig()
	d.NameDir = "/x"
	if got := d.StorageDirs(); len(got) != 1 || got[0] != "/x" {
		t.Fatalf("StorageDirs of NameDir alone = %q", got)
	}
	d.NameDirs = []string{"/y", "/x"}
	if err := d.Validate(); err == nil {
		t.Fatal("NameDir that is not NameDirs[0] validated")
	}
}

func TestNewValidates(t *testing.T) {
	c := DefaultConfig()
	c.NameDir = t.TempDir()
	c.DefaultReplication = 0
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "dfs.replication") {
		t.Fatalf("New with replication 0: %v", err)
	}
	if _, err := Format(c, false); err == nil {
		t.Fatal("Format with replication 0 succeeded")
	}
}

func TestHAConfigFrom(t *testing.T) {
	c := baseConf()
	c.Set("dfs.nameservices", "ns1")
	c.Set("dfs.ha.namenodes.ns1", "nn1,nn2,nn3")
	for i, a := range []string{"10.0.0.1:8020", "10.0.0.2:8020", "10.0.0.3:8020"} {
		id := "nn" + string(rune('1'+i))
		c.Set("dfs.namenode.rpc-address.ns1."+id, a)
		c.Set("dfs.namenode.http-address.ns1."+id, strings.Replace(a, "8020", "9870", 1))
	}
	c.Set("dfs.ha.namenode.id", "nn2")
	c.Set("strata.ha.raft.heartbeat.timeout.ms", "2000")
	cfg, err := ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HA == nil || cfg.HA.ID != "nn2" || len(cfg.HA.Members) != 3 || cfg.RPCAddr != "10.0.0.2:8020" || cfg.HTTPAddr != "10.0.0.2:9870" ||
		cfg.HA.HeartbeatTimeout != 2*time.Second || cfg.HA.ElectionTimeout != time.Second || cfg.HA.LeaderLeaseTimeout != 500*time.Millisecond {
		t.Fatalf("HA config = %+v (rpc %s http %s)", cfg.HA, cfg.RPCAddr, cfg.HTTPAddr)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Set("strata.ha.raft.leader-lease.timeout.ms", "3000")
	if cfg, err = ConfigFrom(c); err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "leader-lease") {
		t.Fatalf("a lease longer than the heartbeat timeout was accepted: %v", err)
	}
}
