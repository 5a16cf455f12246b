package trackers

import (
	"errors"
	"net"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/localcluster"
)

func testConf() *conf.Configuration {
	c := conf.New()
	c.Set("dfs.namenode.rpc-address", "127.0.0.1:0")
	c.Set("dfs.namenode.http-address", "127.0.0.1:0")
	return c
}

// One TaskTracker per DataNode; a stopped JobTracker starts again on its
// address, a stopped TaskTracker is nil until it starts; Close stops all.
func TestTrackersLifecycle(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Conf: testConf(), Dir: t.TempDir(), DataNodes: 2,
		MapReduce: Start, DefaultJobTracker: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := cl.MapReduce.(*Trackers)
	if tr.NumTaskTrackers() != 2 || tr.JobTracker == nil || tr.TaskTrackers[1] == nil {
		t.Fatalf("%d TaskTrackers, JobTracker %v", tr.NumTaskTrackers(), tr.JobTracker)
	}
	if cl.JobTrackerAddr() != tr.JobTracker.Addr() || cl.ClientConf(conf.New()).Get("mapreduce.jobtracker.address") != tr.JobTracker.Addr() {
		t.Fatalf("cluster names JobTracker %s, it runs at %s", cl.JobTrackerAddr(), tr.JobTracker.Addr())
	}
	// The JobTracker writes histories where the cluster's clients
	// (strata job -history) read them: the same done dir on the cluster's
	// file system.
	client := cl.ClientConf(testConf())
	if hc := tr.jtCfg.HistoryConf; hc.Get("fs.defaultFS") != client.Get("fs.defaultFS") || tr.jtCfg.HistoryDir != client.Get("mapreduce.jobhistory.done-dir") {
		t.Errorf("histories written to %s on %s, read from %s on %s", tr.jtCfg.HistoryDir, hc.Get("fs.defaultFS"),
			client.Get("mapreduce.jobhistory.done-dir"), client.Get("fs.defaultFS"))
	}
	addr := tr.JobTrackerAddr()
	if err := tr.StopJobTracker(); err != nil || tr.JobTracker != nil {
		t.Fatalf("stop: %v, %v", err, tr.JobTracker)
	}
	if err := tr.StartJobTracker(); err != nil {
		t.Fatal(err)
	}
	if tr.JobTracker.Addr() != addr {
		t.Fatalf("JobTracker restarted at %s, not %s", tr.JobTracker.Addr(), addr)
	}
	if err := tr.StopTaskTracker(1); err != nil || tr.TaskTrackers[1] != nil {
		t.Fatalf("stop tasktracker: %v", err)
	}
	if err := tr.StartTaskTracker(1); err != nil || tr.TaskTrackers[1] == nil {
		t.Fatalf("start tasktracker: %v", err)
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if tr.JobTracker != nil || tr.TaskTrackers[0] != nil {
		t.Fatal("Close left trackers running")
	}
}

// A JobTracker that cannot listen fails the start with a hint, and the
// cluster's DataNodes are stopped: the same directory starts again.
func TestJobTrackerPortBusy(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	c := testConf()
	c.Set("mapreduce.jobtracker.address", busy.Addr().String())
	_, err = localcluster.Start(localcluster.Config{Conf: c, Dir: dir, DataNodes: 1, MapReduce: Start})
	var se *localcluster.StartError
	if err == nil || !errors.As(err, &se) || se.Hint == "" {
		t.Fatalf("start with a busy JobTracker port: %v", err)
	}
	cl, err := localcluster.Start(localcluster.Config{Conf: testConf(), Dir: dir, DataNodes: 1, MapReduce: Start, DefaultJobTracker: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("second start on the same directory: %v", err)
	}
	cl.Close()
}
