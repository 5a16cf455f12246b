package namenode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// Two name directories: when the first one's disk dies, mutations go on in
// the second, the NameNode reports the failed directory (/status, /jmx
// NameDirStatuses, /metrics), and a NameNode restarted on the second
// directory alone has every acknowledged mkdir.
func TestNameDirFailureMutationsContinue(t *testing.T) {
	fsys := errorfs.Wrap(nil)
	root := t.TempDir()
	first, second := filepath.Join(root, "disk1", "name"), filepath.Join(root, "disk2", "name")
	nn := startTestNameNode(t, func(c *Config) {
		c.FS = fsys
		c.NameDir, c.NameDirs = first, []string{first, second}
	})
	cfg := nn.cfg
	ns := nn.Namesystem()
	ctx := as("hdfs")
	var acked []string
	mkdir := func(p string) {
		t.Helper()
		if err := ns.Mkdirs(ctx, p, 0o755, false); err != nil {
			t.Fatalf("mkdir %s: %v", p, err)
		}
		acked = append(acked, p)
	}
	for i := 0; i < 5; i++ {
		mkdir(fmt.Sprintf("/before%d", i))
	}

	// Every operation under the first disk fails from now on.
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpAll &^ errorfs.OpLock, Path: errorfs.Under(filepath.Dir(first)), Err: syscall.EIO})
	for i := 0; i < 5; i++ {
		mkdir(fmt.Sprintf("/after%d", i))
	}
	if in.Hits() == 0 {
		t.Fatal("the fault was never hit")
	}
	st := nn.Status()
	if len(st.NameDirs) != 2 || st.NameDirs[0].Active || !st.NameDirs[1].Active ||
		!strings.Contains(st.NameDirs[0].Err, syscall.EIO.Error()) {
		t.Fatalf("Status().NameDirs = %+v", st.NameDirs)
	}

	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + nn.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return string(b)
	}
	var jmx struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.Unmarshal([]byte(get("/jmx")), &jmx); err != nil {
		t.Fatal(err)
	}
	var statuses string
	for _, b := range jmx.Beans {
		if b["name"] == "Hadoop:service=NameNode,name=NameNodeInfo" {
			statuses, _ = b["NameDirStatuses"].(string)
		}
	}
	var nds map[string]map[string]string
	if err := json.Unmarshal([]byte(statuses), &nds); err != nil {
		t.Fatalf("NameDirStatuses %q: %v", statuses, err)
	}
	if nds["failed"][first] != "IMAGE_AND_EDITS" || nds["active"][second] != "IMAGE_AND_EDITS" || len(nds["active"]) != 1 {
		t.Fatalf("NameDirStatuses = %s", statuses)
	}
	if m := get("/metrics"); !strings.Contains(m, "strata_namenode_name_dirs_failed 1") {
		t.Fatalf("/metrics lacks the failed directory gauge:\n%s", m)
	}

	// Checkpoints go on too.
	if err := nn.Checkpoint(); err != nil {
		t.Fatalf("checkpoint with one directory failed: %v", err)
	}
	for i := 0; i < 3; i++ {
		mkdir(fmt.Sprintf("/late%d", i))
	}
	if err := nn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	cfg.FS = nil
	cfg.NameDir, cfg.NameDirs = second, nil
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for _, p := range acked {
		if st, err := again.Namesystem().FileInfo(ctx, p); err != nil || st == nil {
			t.Errorf("acknowledged %s missing after a restart on %s alone: %v", p, second, err)
		}
	}
	if err := again.Namesystem().Mkdirs(ctx, "/after-restart", 0o755, false); err != nil {
		t.Fatal(err)
	}
}
