package namenode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// A disk fault under the edit log stops the NameNode's mutations, with an
// error naming the edit log, while reads go on; after a restart on a
// working disk every acknowledged mutation is there, and of the refused
// ones at most those whose records reached the disk before an fsync
// failed (never acknowledged, Hadoop's behaviour too), in order, and none
// after a failed write.
func TestEditLogFaultStopsMutations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  errorfs.Rule
		exact bool // no refused mutation may reappear
	}{
		{"fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, Err: syscall.EIO}, false},
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Err: syscall.ENOSPC}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := errorfs.Wrap(nil)
			nn := startTestNameNode(t, func(c *Config) { c.FS = fsys })
			cfg := nn.cfg
			ns := nn.Namesystem()
			ctx := as("hdfs")
			var acked []string
			for i := 0; i < 5; i++ {
				p := fmt.Sprintf("/acked%d", i)
				if err := ns.Mkdirs(ctx, p, 0o755, false); err != nil {
					t.Fatal(err)
				}
				acked = append(acked, p)
			}
			rule := tc.rule
			rule.Path = errorfs.Under(filepath.Join(cfg.NameDir, "current"))
			in := fsys.Inject(rule)
			var refused []string
			for i := 0; i < 3; i++ {
				p := fmt.Sprintf("/refused%d", i)
				err := ns.Mkdirs(ctx, p, 0o755, false)
				if err == nil {
					t.Fatalf("mkdir %s succeeded on a failing disk", p)
				}
				if !strings.Contains(err.Error(), "edit log") || !strings.Contains(err.Error(), tc.rule.Err.Error()) {
					t.Errorf("mkdir %s: %v, want an error naming the edit log failure", p, err)
				}
				refused = append(refused, p)
			}
			if in.Hits() == 0 {
				t.Fatal("the fault was never hit")
			}
			if st, err := ns.FileInfo(ctx, acked[0]); err != nil || st == nil {
				t.Errorf("reads stopped after the journal failed: %v", err)
			}
			nn.Close()

			cfg.FS = nil
			again, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			for _, p := range acked {
				if st, err := again.Namesystem().FileInfo(ctx, p); err != nil || st == nil {
					t.Errorf("acknowledged %s missing after restart: %v", p, err)
				}
			}
			gap := false
			for _, p := range refused {
				st, _ := again.Namesystem().FileInfo(ctx, p)
				switch {
				case st != nil && (tc.exact || gap):
					t.Errorf("refused %s is there after restart", p)
				case st == nil:
					gap = true
				}
			}
			if err := again.Namesystem().Mkdirs(context.Background(), "/after-restart", 0o755, false); err != nil {
				t.Errorf("mkdir after restart on a working disk: %v", err)
			}
		})
	}
}
