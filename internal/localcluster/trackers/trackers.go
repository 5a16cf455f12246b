// Package trackers runs a local cluster's MapReduce daemons in this
// process: a JobTracker and one TaskTracker per node of a
// localcluster.Cluster. Start is the localcluster.StartMapReduce that
// `strata local`, `strata experiment` and in-process test clusters pass as
// localcluster.Config.MapReduce.
//
// The JobTracker takes mapreduce.jobtracker.address, or
// Config.DefaultJobTracker when that is unset or "local". TaskTracker i is
// named like node i (Config.HostName), so that maps on that node's blocks
// count as data-local; its intermediate data is the node's
// Node.LocalDirs unless mapreduce.cluster.local.dir is set; Config.
// MapSlots and ReduceSlots, if positive, replace
// mapred.tasktracker.{map,reduce}.tasks.maximum; it runs attempts as
// children of Config.Executable (default this program) with the argument
// "task".
//
// A stopped JobTracker starts again on the address it had; a restarted
// TaskTracker takes a new shuffle port and so is a new tracker to the
// JobTracker, as in Hadoop. The methods are not safe for concurrent use.
package trackers

import (
	"fmt"
	"net"
	"strconv"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/tasktracker"
)

// Trackers is a running JobTracker and its TaskTrackers.
type Trackers struct {
	// JobTracker is the running JobTracker (nil while stopped).
	JobTracker *jobtracker.JobTracker
	// TaskTrackers are the TaskTrackers by node; a stopped one is nil.
	TaskTrackers []*tasktracker.TaskTracker

	conf   *conf.Configuration // the TaskTrackers' configuration
	jtCfg  jobtracker.Config
	ttCfgs []tasktracker.Config
}

var _ localcluster.MapReduce = (*Trackers)(nil)

// Start starts a JobTracker and one TaskTracker per DataNode of c. On
// error it stops what it started; a JobTracker that cannot listen is a
// *localcluster.StartError with a hint.
func Start(c *localcluster.Cluster) (_ localcluster.MapReduce, err error) {
	cfg := c.Config()
	mc := c.Conf()
	if a := mc.Get("mapreduce.jobtracker.address"); a == "" || a == "local" {
		mc.Set("mapreduce.jobtracker.address", cfg.DefaultJobTracker)
	}
	jc, err := jobtracker.ConfigFrom(mc)
	if err != nil {
		return nil, err
	}
	jc.Logger = cfg.Logger.With("daemon", "jobtracker")
	// The histories go to the cluster's file system, where a client of
	// it (strata job -history with the cluster's client configuration)
	// reads them, not to the default of the configuration it started
	// from.
	hc := mc.Clone()
	hc.Set("fs.defaultFS", c.DefaultFS())
	jc.HistoryConf = hc
	if _, port, _ := net.SplitHostPort(jc.Addr); port == "0" && !cfg.Conf.IsSet("mapreduce.jobtracker.http.address") {
		jc.HTTPAddr = "127.0.0.1:0" // a cluster on free ports: its web UI on one too
	}
	tr := &Trackers{conf: mc, jtCfg: jc}
	if err := tr.StartJobTracker(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tr.Close()
		}
	}()
	if cfg.MapSlots > 0 {
		mc.Set("mapred.tasktracker.map.tasks.maximum", strconv.Itoa(cfg.MapSlots))
	}
	if cfg.ReduceSlots > 0 {
		mc.Set("mapred.tasktracker.reduce.tasks.maximum", strconv.Itoa(cfg.ReduceSlots))
	}
	for i := range c.DataNodes {
		tc, err := tasktracker.ConfigFrom(mc)
		if err != nil {
			return nil, err
		}
		if !cfg.Conf.IsSet("mapreduce.cluster.local.dir") {
			tc.LocalDirs = c.Nodes[i].LocalDirs
		}
		if len(tc.LocalDirs) == 0 {
			return nil, fmt.Errorf("tasktracker %d: no mapreduce.cluster.local.dir", i)
		}
		tc.HTTPAddr, tc.Host = "127.0.0.1:0", cfg.HostName(i)
		tc.Executable = cfg.Executable
		tc.Logger = cfg.Logger.With("tt", i)
		tr.ttCfgs = append(tr.ttCfgs, tc)
		tr.TaskTrackers = append(tr.TaskTrackers, nil)
		if err := tr.StartTaskTracker(i); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// JobTrackerAddr is the JobTracker's RPC address.
func (tr *Trackers) JobTrackerAddr() string { return tr.jtCfg.Addr }

// JobTrackerHTTPAddr is the JobTracker's web UI address ("" without one
// or while it is stopped).
func (tr *Trackers) JobTrackerHTTPAddr() string {
	if tr.JobTracker == nil {
		return ""
	}
	return tr.JobTracker.HTTPAddr()
}

// StartJobTracker starts the JobTracker; after its first start, on the
// address it had.
func (tr *Trackers) StartJobTracker() error {
	if tr.JobTracker != nil {
		return nil
	}
	jt := jobtracker.New(tr.jtCfg)
	if err := jt.Start(); err != nil {
		return &localcluster.StartError{Err: err, Hint: "choose other ports with -D mapreduce.jobtracker.address=127.0.0.1:0 (and -D mapreduce.jobtracker.http.address=127.0.0.1:0 for its web UI), or -nomapreduce"}
	}
	tr.JobTracker = jt
	tr.jtCfg.Addr = jt.Addr()
	if a := jt.HTTPAddr(); a != "" {
		tr.jtCfg.HTTPAddr = a
	}
	tr.conf.Set("mapreduce.jobtracker.address", jt.Addr())
	return nil
}

// StopJobTracker closes the JobTracker; its running jobs are lost, as
// with Hadoop's MRv1 JobTracker.
func (tr *Trackers) StopJobTracker() error {
	if tr.JobTracker == nil {
		return nil
	}
	err := tr.JobTracker.Close()
	tr.JobTracker = nil
	return err
}

// NumTaskTrackers is the number of TaskTrackers, running or not.
func (tr *Trackers) NumTaskTrackers() int { return len(tr.TaskTrackers) }

// StartTaskTracker starts stopped TaskTracker i on its local dirs.
func (tr *Trackers) StartTaskTracker(i int) error {
	if tr.TaskTrackers[i] != nil {
		return nil
	}
	t, err := tasktracker.New(tr.ttCfgs[i])
	if err == nil {
		if err = t.Start(); err != nil {
			t.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("tasktracker %d: %w", i, err)
	}
	tr.TaskTrackers[i] = t
	return nil
}

// StopTaskTracker closes TaskTracker i, killing its running attempts; the
// JobTracker declares it lost after mapreduce.jobtracker.expire.trackers.
// interval and re-runs its work.
func (tr *Trackers) StopTaskTracker(i int) error {
	t := tr.TaskTrackers[i]
	if t == nil {
		return nil
	}
	tr.TaskTrackers[i] = nil
	return t.Close()
}

// Close stops the TaskTrackers, then the JobTracker. Safe to call twice.
func (tr *Trackers) Close() error {
	for i := range tr.TaskTrackers {
		tr.StopTaskTracker(i)
	}
	return tr.StopJobTracker()
}
