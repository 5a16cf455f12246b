package conf

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestKnownKeysTable(t *testing.T) {
	if !sort.SliceIsSorted(knownKeys, func(i, j int) bool { return knownKeys[i].Name < knownKeys[j].Name }) {
		for i := 1; i < len(knownKeys); i++ {
			if knownKeys[i-1].Name >= knownKeys[i].Name {
				t.Errorf("knownKeys not sorted: %q before %q", knownKeys[i-1].Name, knownKeys[i].Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range knownKeys {
		if seen[k.Name] {
			t.Errorf("duplicate key %q", k.Name)
		}
		seen[k.Name] = true
		if k.Name != strings.TrimSpace(k.Name) || k.Name == "" || strings.ContainsAny(k.Name, " \t${}") {
			t.Errorf("bad key name %q", k.Name)
		}
		if k.Doc == "" || strings.Contains(k.Doc, "\n") {
			t.Errorf("%s: doc must be one non-empty line", k.Name)
		}
		if k.Name == userNameKey {
			t.Errorf("%s must not be a known key", userNameKey)
		}
		if isFree(k.Name) {
			t.Errorf("%s lies under a free prefix", k.Name)
		}
	}
	if len(keys) != len(knownKeys) {
		t.Errorf("keys has %d entries, knownKeys %d", len(keys), len(knownKeys))
	}
	for old, repl := range deprecations {
		if _, ok := keys[old]; ok {
			t.Errorf("deprecated key %q is also known", old)
		}
		if _, ok := keys[repl]; !ok {
			t.Errorf("deprecated key %q maps to unknown key %q", old, repl)
		}
	}
}

// TestRequiredKeys checks keys and defaults the package promises.
func TestRequiredKeys(t *testing.T) {
	want := map[string]string{
		"fs.defaultFS":                                              "file:///",
		"hadoop.tmp.dir":                                            "/tmp/hadoop-${user.name}",
		"io.file.buffer.size":                                       "4096",
		"ipc.maximum.data.length":                                   "134217728",
		"ipc.client.connect.timeout":                                "20000",
		"dfs.replication":                                           "3",
		"dfs.blocksize":                                             "134217728",
		"dfs.bytes-per-checksum":                                    "512",
		"dfs.checksum.type":                                         "CRC32C",
		"dfs.namenode.rpc-address":                                  "127.0.0.1:8020",
		"dfs.namenode.http-address":                                 "127.0.0.1:9870",
		"dfs.namenode.name.dir":                                     "file://${hadoop.tmp.dir}/dfs/name",
		"dfs.namenode.handler.count":                                "10",
		"dfs.namenode.checkpoint.period":                            "3600",
		"dfs.namenode.checkpoint.txns":                              "1000000",
		"dfs.namenode.fs-limits.max-component-length":               "255",
		"dfs.namenode.fs-limits.max-directory-items":                "1048576",
		"dfs.namenode.fs-limits.min-block-size":                     "1048576",
		"dfs.permissions.enabled":                                   "true",
		"dfs.permissions.superusergroup":                            "supergroup",
		"fs.permissions.umask-mode":                                 "022",
		"dfs.namenode.safemode.threshold-pct":                       "0.999f",
		"dfs.namenode.safemode.extension":                           "30000",
		"dfs.heartbeat.interval":                                    "3",
		"dfs.namenode.heartbeat.recheck-interval":                   "300000",
		"dfs.datanode.data.dir":                                     "file://${hadoop.tmp.dir}/dfs/data",
		"dfs.datanode.address":                                      "127.0.0.1:9866",
		"dfs.datanode.http.address":                                 "127.0.0.1:9864",
		"dfs.datanode.ipc.address":                                  "127.0.0.1:9867",
		"dfs.datanode.max.transfer.threads":                         "4096",
		"dfs.datanode.failed.volumes.tolerated":                     "0",
		"dfs.datanode.fsdataset.volume.choosing.policy":             "",
		"dfs.blockreport.intervalMsec":                              "21600000",
		"dfs.client.read.shortcircuit":                              "false",
		"dfs.domain.socket.path":                                    "",
		"dfs.storage.policy.enabled":                                "true",
		"hadoop.security.authentication":                            "simple",
		"dfs.client.block.write.replace-datanode-on-failure.enable": "true",
		"mapreduce.framework.name":                                  "local",
		"mapreduce.jobtracker.address":                              "local",
		"mapreduce.jobtracker.http.address":                         "127.0.0.1:50030",
		"mapreduce.tasktracker.http.address":                        "127.0.0.1:50060",
		"mapreduce.cluster.local.dir":                               "${hadoop.tmp.dir}/mapred/local",
		"mapreduce.task.io.sort.mb":                                 "100",
		"mapreduce.task.io.sort.factor":                             "10",
		"mapreduce.map.sort.spill.percent":                          "0.80",
		"mapreduce.map.output.compress":                             "false",
		"mapreduce.output.fileoutputformat.compress":                "false",
		"mapreduce.job.reduces":                                     "1",
		"mapreduce.job.maps":                                        "2",
		"mapreduce.reduce.shuffle.parallelcopies":                   "5",
		"mapreduce.reduce.shuffle.input.buffer.percent":             "0.70",
		"mapreduce.reduce.shuffle.merge.percent":                    "0.66",
		"mapreduce.task.timeout":                                    "600000",
		"mapreduce.map.maxattempts":                                 "4",
		"mapreduce.reduce.maxattempts":                              "4",
		"mapreduce.map.speculative":                                 "true",
		"mapreduce.reduce.speculative":                              "true",
		"mapred.tasktracker.map.tasks.maximum":                      "2",
		"mapred.tasktracker.reduce.tasks.maximum":                   "2",
		"mapreduce.terasort.output.replication":                     "1",
		"mapreduce.randomwriter.bytespermap":                        "1073741824",
		"strata.local.datanodes":                                    "3",
		"strata.power.watts":                                        "",
		"strata.datanode.direct-io.write":                           "false",
	}
	for name, def := range want {
		k, ok := LookupKey(name)
		if !ok {
			t.Errorf("%s is not a known key", name)
			continue
		}
		if k.Default != def {
			t.Errorf("%s default = %q, want %q", name, k.Default, def)
		}
	}
	for _, name := range []string{"mapreduce.map.output.compress.codec", "mapreduce.randomtextwriter.bytespermap", "ipc.server.handler.queue.size"} {
		if _, ok := LookupKey(name); !ok {
			t.Errorf("%s is not a known key", name)
		}
	}
}

// TestDefaultsParse checks that typed defaults parse with the getter
// their readers will use.
func TestDefaultsParse(t *testing.T) {
	c := New()
	for _, k := range knownKeys {
		d := strings.TrimSpace(k.Default)
		if d == "" {
			continue
		}
		var err error
		switch {
		case d == "true" || d == "false":
			_, err = c.GetBool(k.Name)
		case strings.Contains(k.Doc, "integer ranges"):
			_, err = ParseIntegerRanges(d)
		case strings.Contains(k.Doc, "Milliseconds"):
			_, err = c.GetDuration(k.Name, time.Millisecond)
		case strings.Contains(k.Doc, "Seconds"):
			_, err = c.GetDuration(k.Name, time.Second)
		case strings.ContainsAny(d[:1], "0123456789") && !strings.Contains(d, ":"):
			if strings.Contains(d, ".") {
				_, err = c.GetFloat(k.Name)
			} else {
				_, err = c.GetBytes(k.Name)
			}
		}
		if err != nil {
			t.Errorf("default of %s: %v", k.Name, err)
		}
	}
}

func TestKnownKeysCopy(t *testing.T) {
	ks := KnownKeys()
	ks[0].Name = "changed"
	if knownKeys[0].Name == "changed" {
		t.Fatal("KnownKeys returned the table itself")
	}
	if r, ok := Deprecation("fs.default.name"); !ok || r != "fs.defaultFS" {
		t.Errorf("Deprecation(fs.default.name) = %q, %v", r, ok)
	}
	if _, ok := Deprecation("fs.defaultFS"); ok {
		t.Error("fs.defaultFS reported deprecated")
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ key, want string }{
		{"dfs.replciation", "dfs.replication"}, // transposition
		{"dfs.replicaton", "dfs.replication"},  // deletion
		{"dfs.replicationn", "dfs.replication"},
		{"fs.defaultfs", "fs.defaultFS"}, // case
		{"FS.DEFAULTFS", "fs.defaultFS"},
		{"dfs.blok.size", "dfs.blocksize"}, // near a deprecated name
		{"mapred.reduce.task", "mapreduce.job.reduces"},
		{"dfs.replication", "dfs.replication"},
		{"dfs.namenode.handler.cnt", "dfs.namenode.handler.count"},
		{"completely.unrelated.key", ""},
		{"", ""},
		{"x", ""},
		{"dfs.heartbeat.intervalxxxx", ""}, // distance 4
	}
	for _, tt := range tests {
		if got := Suggest(tt.key); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"abc", "acb", 1},
		{"abc", "ab", 1},
		{"abc", "xbc", 1},
		{"ca", "abc", 3}, // OSA, not Damerau: 3
		{"kitten", "sitting", 3},
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, 10); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a, 10); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
	if got := editDistance("aaaaaaaa", "bbbbbbbb", 3); got < 3 {
		t.Errorf("limited distance = %d, want >= 3", got)
	}
}
