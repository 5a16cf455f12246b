package tasktracker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/security"
)

// The keys the TaskTracker reads: its own (ConfigFrom) and, per attempt,
// from the job's settings in its TaskSpec.
const (
	keyJobTracker   = "mapreduce.jobtracker.address"
	keyHTTPAddr     = "mapreduce.tasktracker.http.address"
	keyLocalDirs    = "mapreduce.cluster.local.dir"
	keyMapSlots     = "mapred.tasktracker.map.tasks.maximum"
	keyReduceSlots  = "mapred.tasktracker.reduce.tasks.maximum"
	keyTaskTimeout  = "mapreduce.task.timeout"
	keyMapMemory    = "mapreduce.map.memory.mb"
	keyReduceMemory = "mapreduce.reduce.memory.mb"
	keyMemoryEvery  = "mapreduce.tasktracker.taskmemorymanager.monitoringinterval"
	keyController   = "mapreduce.tasktracker.taskcontroller"
	keyHostName     = "slave.host.name"
	keyDNSInterface = "mapred.tasktracker.dns.interface"
	keyOutOfBand    = "mapreduce.tasktracker.outofband.heartbeat"
)

// Task controllers (mapreduce.tasktracker.taskcontroller), Hadoop's class
// names.
const (
	// DefaultTaskController runs attempts as the TaskTracker's own user.
	DefaultTaskController = "org.apache.hadoop.mapred.DefaultTaskController"
	// LinuxTaskController runs each attempt as its job's user: the
	// TaskTracker must run as root; users with an id below MinUserID
	// (root among them) are refused, as Hadoop's task-controller's
	// min.user.id default does.
	LinuxTaskController = "org.apache.hadoop.mapred.LinuxTaskController"
	// MinUserID is the lowest uid LinuxTaskController runs a task as.
	MinUserID = 1000
)

// Config configures a TaskTracker. Nothing in it changes once the
// TaskTracker exists. The defaults of the fields with a key are those of
// conf's table of known keys (DefaultConfig).
type Config struct {
	// JobTracker is the JobTracker's RPC address, host:port
	// (mapreduce.jobtracker.address; default "local", which a TaskTracker
	// refuses).
	JobTracker string
	// HTTPAddr is where map outputs are served, host:port
	// (mapreduce.tasktracker.http.address; default 127.0.0.1:50060).
	HTTPAddr string
	// PProf serves Go's profiler at /debug/pprof/ on HTTPAddr
	// (strata.http.pprof.enabled; default false).
	PProf bool
	// HTTPAuth authenticates the pages and /tasklog
	// (hadoop.http.authentication.*; the zero value is simple); the
	// shuffle keeps its job-token authentication.
	HTTPAuth httpauth.Config
	// Host is the host the tracker advertises: its name
	// tracker_<Host>:<shuffle port>, the host of its shuffle URL (unless
	// the shuffle server is bound to a specific address, which the URL
	// then names) and what
	// the JobTracker matches against input split hosts for data-local maps
	// (slave.host.name; empty: DNSInterface's address, else the shuffle
	// server's bound address if specific, else the local address of the
	// interface that reaches the JobTracker, else the machine's host name).
	Host string
	// DNSInterface is the network interface whose first address is Host
	// when Host is empty (mapred.tasktracker.dns.interface; default
	// "default": none).
	DNSInterface string
	// LocalDirs hold intermediate data, at least one
	// (mapreduce.cluster.local.dir; default ${hadoop.tmp.dir}/mapred/local).
	LocalDirs []string
	// MapSlots and ReduceSlots are how many attempts of each kind run at
	// once, at least 1 (mapred.tasktracker.{map,reduce}.tasks.maximum;
	// default 2 each).
	MapSlots, ReduceSlots int
	// Executable is the program run for each attempt with the argument
	// "task" (no key; empty: this process's executable). A job that ships
	// its own program runs that instead.
	Executable string
	// User is who the TaskTracker says it is to the JobTracker (no key;
	// empty: the current user).
	User string
	// Security are the secure-mode settings (hadoop.security.*, the
	// TaskTracker's principal and keytab).
	Security security.Settings
	// Login is the TaskTracker's Kerberos login in secure mode, made by
	// New from Security; nil in simple mode.
	Login *security.Login
	// ACLsEnabled restricts an attempt's log (/tasklog) to its job's
	// owner, the administrators, User and the job's
	// mapreduce.job.acl-view-job (mapreduce.cluster.acls.enabled, as the
	// JobTracker's pages).
	ACLsEnabled bool
	// Admins are the cluster's administrators
	// (mapreduce.cluster.administrators).
	Admins jobtracker.ACL
	// Groups returns a user's groups for the ACLs (no key; nil: the
	// operating system's).
	Groups func(user string) []string
	// TaskController says as whom attempts run
	// (mapreduce.tasktracker.taskcontroller; default
	// DefaultTaskController, the TaskTracker's own user;
	// LinuxTaskController: the job's user, which needs root).
	TaskController string
	// OutOfBandHeartbeat sends a heartbeat as soon as an attempt ends or
	// asks to commit, instead of at the next interval, so the JobTracker
	// hears of it (and hands out the next task) without waiting
	// (mapreduce.tasktracker.outofband.heartbeat; strata's default true,
	// Hadoop's false).
	OutOfBandHeartbeat bool
	// Logger receives the daemon's log (no key; nil: slog.Default()).
	Logger *slog.Logger
}

// DefaultConfig is the Config of an empty configuration: every default
// from conf's table of known keys. Its JobTracker is "local", so a
// TaskTracker needs one set.
func DefaultConfig() Config {
	return read(conf.New())
}

// ConfigFrom reads a TaskTracker's settings and validates them.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg := read(c)
	r := conf.NewReader(c, "tasktracker")
	cfg.MapSlots, cfg.ReduceSlots = int(r.Int(keyMapSlots)), int(r.Int(keyReduceSlots))
	cfg.OutOfBandHeartbeat = r.Bool(keyOutOfBand)
	r.AddAs(secureConfig(c, &cfg))
	_, err := httpauth.ConfigFrom(c) // read's, with its error
	r.AddAs(err)
	if err := r.Err(); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// read is ConfigFrom without its errors; the slot counts of the table's
// defaults always parse.
func read(c *conf.Configuration) Config {
	cfg := Config{JobTracker: c.Get(keyJobTracker), HTTPAddr: c.Get(keyHTTPAddr), LocalDirs: c.GetStrings(keyLocalDirs),
		TaskController: c.GetTrimmed(keyController), Host: c.GetTrimmed(keyHostName), DNSInterface: c.GetTrimmed(keyDNSInterface)}
	m, _ := c.GetInt(keyMapSlots)
	r, _ := c.GetInt(keyReduceSlots)
	cfg.MapSlots, cfg.ReduceSlots = int(m), int(r)
	cfg.OutOfBandHeartbeat, _ = c.GetBool(keyOutOfBand)
	cfg.PProf, _ = c.GetBool("strata.http.pprof.enabled")
	cfg.HTTPAuth, _ = httpauth.ConfigFrom(c)
	cfg.ACLsEnabled, _ = c.GetBool("mapreduce.cluster.acls.enabled")
	cfg.Admins = jobtracker.ParseACL(c.Get("mapreduce.cluster.administrators"))
	return cfg
}

// Validate says what is wrong with cfg, if anything, naming the key.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.JobTracker == "" || cfg.JobTracker == "local" {
		errs = append(errs, errors.New("tasktracker: set "+keyJobTracker+" (host:port)"))
	}
	if cfg.HTTPAddr == "" {
		errs = append(errs, errors.New("tasktracker: set "+keyHTTPAddr+" (host:port)"))
	}
	if len(cfg.LocalDirs) == 0 {
		errs = append(errs, errors.New("tasktracker: "+keyLocalDirs+" is empty"))
	}
	for _, d := range cfg.LocalDirs {
		if d == "" {
			errs = append(errs, fmt.Errorf("tasktracker: %s %q names an empty directory", keyLocalDirs, cfg.LocalDirs))
			break
		}
	}
	switch cfg.TaskController {
	case "", DefaultTaskController:
	case LinuxTaskController:
		if os.Geteuid() != 0 {
			errs = append(errs, fmt.Errorf("tasktracker: %s=%s needs the TaskTracker to run as root", keyController, cfg.TaskController))
		}
	default:
		errs = append(errs, fmt.Errorf("tasktracker: %s=%q: use %s or %s", keyController, cfg.TaskController, DefaultTaskController, LinuxTaskController))
	}
	if cfg.MapSlots < 1 {
		errs = append(errs, fmt.Errorf("tasktracker: %s must be at least 1, got %d", keyMapSlots, cfg.MapSlots))
	}
	if cfg.ReduceSlots < 1 {
		errs = append(errs, fmt.Errorf("tasktracker: %s must be at least 1, got %d", keyReduceSlots, cfg.ReduceSlots))
	}
	return errors.Join(errs...)
}
