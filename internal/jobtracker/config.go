package jobtracker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// The keys the JobTracker reads: its own (ConfigFrom) and, per job, from
// the settings the job's client sent.
const (
	keyAddress           = "mapreduce.jobtracker.address"
	keyHTTPAddress       = "mapreduce.jobtracker.http.address"
	keyHeartbeatInterval = "mapreduce.jobtracker.heartbeat.interval"
	keyTrackerExpiry     = "mapreduce.jobtracker.expire.trackers.interval"
	keyRetiredJobs       = "mapreduce.jobtracker.retiredjobs.cache.size"

	keyMapMaxAttempts    = "mapreduce.map.maxattempts"
	keyReduceMaxAttempts = "mapreduce.reduce.maxattempts"
	keyMapSpeculative    = "mapreduce.map.speculative"
	keyReduceSpeculative = "mapreduce.reduce.speculative"
	keySpeculativeLag    = "strata.mapreduce.speculative.lag"
	keySlowstart         = "mapreduce.job.reduce.slowstart.completedmaps"
	keyHistoryDir        = "mapreduce.jobhistory.done-dir"
	keyACLsEnabled       = "mapreduce.cluster.acls.enabled"
	keyAdmins            = "mapreduce.cluster.administrators"
	keyACLModifyJob      = "mapreduce.job.acl-modify-job"
	keyACLViewJob        = "mapreduce.job.acl-view-job"
)

// Config configures a JobTracker. Nothing in it changes once the
// JobTracker is started. The defaults are those of conf's table of known
// keys (DefaultConfig).
type Config struct {
	// Addr is the RPC address, host:port (mapreduce.jobtracker.address;
	// default "local", which means jobs run in their clients' processes
	// and which a JobTracker refuses).
	Addr string
	// HTTPAddr is the web UI's address, host:port
	// (mapreduce.jobtracker.http.address; default 127.0.0.1:50030, port 0
	// when Addr's port is 0 and the key is unset); empty: no web UI. As in
	// Hadoop, a JobTracker whose web UI cannot bind does not start.
	HTTPAddr string
	// PProf serves Go's profiler at /debug/pprof/ on HTTPAddr
	// (strata.http.pprof.enabled; default false).
	PProf bool
	// HTTPAuth authenticates the web UI (hadoop.http.authentication.*;
	// the zero value is simple).
	HTTPAuth httpauth.Config
	// HeartbeatInterval is the time between a TaskTracker's heartbeats,
	// which the JobTracker tells them in every answer
	// (mapreduce.jobtracker.heartbeat.interval, milliseconds; default 1 s).
	HeartbeatInterval time.Duration
	// TrackerExpiry declares a TaskTracker lost after this long without a
	// heartbeat, and its work re-runs elsewhere
	// (mapreduce.jobtracker.expire.trackers.interval, milliseconds;
	// default 10 min). It must be longer than HeartbeatInterval.
	TrackerExpiry time.Duration
	// RetiredJobs is how many finished jobs stay in memory for -status and
	// -list (mapreduce.jobtracker.retiredjobs.cache.size; default 1000);
	// older ones are forgotten, their histories stay on the file system.
	RetiredJobs int
	// HistoryDir is where the JobTracker writes each finished job's
	// history, <HistoryDir>/<job id>.json, on the file system HistoryConf
	// names, as User (mapreduce.jobhistory.done-dir of the JobTracker's
	// own configuration, never a job's; default
	// ${hadoop.tmp.dir}/mapred/history/done; empty: no histories).
	HistoryDir string
	// HistoryConf is the JobTracker's own configuration, with which it
	// opens HistoryDir's file system (no key; nil: the defaults).
	HistoryConf *conf.Configuration
	// User is the JobTracker's own user: it writes the histories and is
	// an administrator of every job (no key; empty: the current user).
	User string
	// ACLsEnabled makes killing a job need its owner, an administrator
	// or a user the job's mapreduce.job.acl-modify-job names
	// (mapreduce.cluster.acls.enabled; strata's default is true, Hadoop's
	// false); false lets anyone kill any job, as Hadoop's default does.
	ACLsEnabled bool
	// Admins are the cluster's administrators, who may kill any job
	// (mapreduce.cluster.administrators, Hadoop's ACL format "users
	// groups"; default " ", nobody but User).
	Admins ACL
	// Redactor hides sensitive settings on the job configuration page
	// (hadoop.security.sensitive-config-keys of the JobTracker's own
	// configuration; nil: the default patterns).
	Redactor *conf.Redactor
	// Groups returns a user's groups for the ACLs (no key; nil: the
	// operating system's, as Hadoop's ShellBasedUnixGroupsMapping).
	Groups func(user string) []string
	// IPC configures the RPC server: its limits and timeouts (the ipc.*
	// keys, ipc.ServerConfigFrom). Its Logger is Logger.
	IPC ipc.ServerConfig
	// Security are the secure-mode settings (hadoop.security.*, the
	// JobTracker's principal and keytab); it logs in when it starts.
	Security security.Settings
	// Logger receives the daemon's log (no key; nil: slog.Default()).
	Logger *slog.Logger
	// Clock tells the time for heartbeat expiry, speculation and job
	// times (no key; nil: time.Now). Tests drive the scheduler with a
	// fake one.
	Clock func() time.Time
}

// DefaultConfig is the Config of an empty configuration: every default
// from conf's table of known keys. Its Addr is "local", so a JobTracker
// needs one set before it starts.
func DefaultConfig() Config {
	cfg, err := read(conf.New())
	if err != nil {
		panic("jobtracker: the defaults in conf's table do not parse: " + err.Error())
	}
	return cfg
}

// ConfigFrom reads the JobTracker's settings and validates them.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg, err := read(c)
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func read(c *conf.Configuration) (Config, error) {
	r := conf.NewReader(c, "jobtracker")
	cfg := Config{Addr: c.Get(keyAddress), HistoryDir: c.GetTrimmed(keyHistoryDir), HistoryConf: c, User: fs.CurrentUser(),
		Admins: ParseACL(c.Get(keyAdmins))}
	cfg.ACLsEnabled = r.Bool(keyACLsEnabled)
	red, err := conf.NewRedactor(c)
	r.AddAs(err)
	cfg.Redactor = red
	cfg.HTTPAddr, cfg.PProf = c.GetTrimmed(keyHTTPAddress), r.Bool("strata.http.pprof.enabled")
	if _, port, err := net.SplitHostPort(cfg.Addr); err == nil && port == "0" && !c.IsSet(keyHTTPAddress) {
		// A JobTracker on a free port (a test, a harness) takes a free
		// web UI port too, never Hadoop's 50030 another may hold.
		if host, _, err := net.SplitHostPort(cfg.HTTPAddr); err == nil {
			cfg.HTTPAddr = net.JoinHostPort(host, "0")
		}
	}
	httpAuth, err := httpauth.ConfigFrom(c)
	r.AddAs(err)
	cfg.HTTPAuth = httpAuth
	ipcCfg, err := ipc.ServerConfigFrom(c)
	r.Add(err)
	cfg.IPC = ipcCfg
	r.Add(secureConfig(c, &cfg))
	cfg.HeartbeatInterval = r.Duration(keyHeartbeatInterval, time.Millisecond)
	cfg.TrackerExpiry = r.Duration(keyTrackerExpiry, time.Millisecond)
	cfg.RetiredJobs = int(r.Int(keyRetiredJobs))
	return cfg, r.Err()
}

// Validate says what is wrong with cfg, if anything, naming the key.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Addr == "" || cfg.Addr == "local" {
		errs = append(errs, errors.New("jobtracker: set "+keyAddress+" (host:port)"))
	}
	if cfg.HeartbeatInterval <= 0 {
		errs = append(errs, fmt.Errorf("jobtracker: %s must be positive, got %v", keyHeartbeatInterval, cfg.HeartbeatInterval))
	}
	if cfg.TrackerExpiry <= cfg.HeartbeatInterval {
		errs = append(errs, fmt.Errorf("jobtracker: %s (%v) must be longer than %s (%v)",
			keyTrackerExpiry, cfg.TrackerExpiry, keyHeartbeatInterval, cfg.HeartbeatInterval))
	}
	if cfg.RetiredJobs < 1 {
		errs = append(errs, fmt.Errorf("jobtracker: %s must be at least 1, got %d", keyRetiredJobs, cfg.RetiredJobs))
	}
	return errors.Join(errs...)
}
