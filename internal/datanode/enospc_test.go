package datanode_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// TestFullDataNodeIsLeftOutOfPipelines fills every volume of one of four
// DataNodes (ENOSPC on each replica write, while statfs still shows room,
// as a quota would): clients writing with replication 3 see that node
// fail their pipeline, recover without it, and every file reads back;
// the full node keeps no replica, and ENOSPC does not take its volumes
// out of service.
func TestFullDataNodeIsLeftOutOfPipelines(t *testing.T) {
	full := errorfs.Wrap(nil)
	c := testcluster.New(t, testcluster.Config{DataNodes: 4, DataNode: func(i int, dc *datanode.Config) {
		if i == 0 {
			dc.FS = full
		}
	}})
	dn0 := filepath.Join(c.Dir(), "dn0") + string(filepath.Separator)
	rule := full.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Err: syscall.ENOSPC, Path: func(p string) bool {
		return strings.HasPrefix(p, dn0) && strings.Contains(p, string(filepath.Separator)+"rbw"+string(filepath.Separator))
	}})
	cl := c.Client(c.Superuser())
	rng := rand.New(rand.NewPCG(1, 2))
	var files [][]byte
	for i := 0; i < 12 && rule.Hits() == 0; i++ {
		data := make([]byte, 200<<10)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		p := fmt.Sprintf("/f%d", i)
		w, err := cl.CreateFile(context.Background(), p, fs.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatalf("%s: write with one full DataNode: %v", p, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: close with one full DataNode: %v", p, err)
		}
		files = append(files, data)
	}
	if rule.Hits() == 0 {
		t.Fatal("the full DataNode was in no pipeline")
	}
	for i, data := range files {
		f, err := cl.OpenFile(context.Background(), fmt.Sprintf("/f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("/f%d reads back wrong (%v)", i, err)
		}
	}
	ds := c.DataNode(0).Dataset()
	for sid, reps := range ds.Report() {
		if len(reps) != 0 {
			t.Errorf("full DataNode holds replicas on %s: %+v", sid, reps)
		}
	}
	for _, v := range ds.Volumes() {
		if v.Failed {
			t.Errorf("volume %s taken out of service by ENOSPC", v.Path)
		}
	}
	if err := c.DataNode(0).CheckVolumes(); err != nil {
		t.Fatalf("CheckVolumes on the full DataNode: %v", err)
	}
}
