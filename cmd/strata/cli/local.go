package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/localcluster/trackers"
	"github.com/stratafs/strata/internal/media"
)

func init() {
	register(command{name: "local", summary: "run an embedded cluster in this process (data under ./strata-data)", run: runLocal})
}

// runLocal starts an embedded cluster: a NameNode (with -ha, an HA
// nameservice ns1 of three) and N DataNodes (each with an SSD and a DISK
// directory) whose storage is under the data directory, formatted on
// first use. It writes a config directory that points clients at it and
// runs until interrupted.
func runLocal(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("local", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	dataDir := fl.String("data", "strata-data", "directory holding the cluster's storage and its config dir")
	numDN := fl.Int("datanodes", -1, "number of DataNodes (default strata.local.datanodes, 3)")
	noMR := fl.Bool("nomapreduce", false, "start no JobTracker and TaskTrackers")
	secure := fl.Bool("secure", false, "secure mode: run a Kerberos KDC in <data>/kdc with principals and keytabs for every daemon and one for you, and require Kerberos (SPNEGO on the web UIs and WebHDFS)")
	ha := fl.Bool("ha", false, "run an HA nameservice, ns1, of three NameNodes (on free ports, kept in <data>/"+localcluster.NameserviceFile+")")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	log := logger(env.Stderr)
	n := *numDN
	if n < 0 {
		v, err := env.Conf.GetInt("strata.local.datanodes")
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		n = int(v)
	}
	// Emulated media (strata.media.dirs), if configured, for the
	// DataNodes here and the TaskTrackers' task children.
	if err := media.Configure(env.Conf); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	// A JobTracker, and one TaskTracker per DataNode, named like it (maps
	// on its blocks count as data-local) and with its intermediate data on
	// that node's SSD directory.
	lc := localcluster.Config{Conf: env.Conf, Dir: abs, DataNodes: n, DefaultJobTracker: "127.0.0.1:8021", Logger: log}
	if *ha {
		lc.Conf, lc.NameNodes = haLocalConf(env.Conf), localHANameNodes
	}
	scKeys := localShortCircuit(lc.Conf, abs)
	localKeys := maps.Clone(scKeys)
	if localDropBehind(lc.Conf) {
		if localKeys == nil {
			localKeys = map[string]string{}
		}
		localKeys[dropBehindKey] = "true"
	}
	if localKeys != nil {
		lc.Conf = lc.Conf.Clone()
		for k, v := range localKeys {
			lc.Conf.Set(k, v)
		}
	}
	if !*noMR {
		lc.MapReduce = trackers.Start
	}
	var realm *localcluster.Realm
	if *secure {
		hosts := make([]string, n)
		for i := range hosts {
			hosts[i] = localcluster.DefaultHostName(i)
		}
		if realm, err = localcluster.StartRealm(abs, fs.CurrentUser(), hosts); err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		defer realm.Close()
		lc.Conf = realm.Apply(lc.Conf)
		// The daemons here and the task processes they start find the
		// realm's KDC through it.
		os.Setenv("KRB5_CONFIG", realm.KDC.ConfigPath)
		if _, err := realm.Login(lc.Conf); err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		defer func() { ipc.SetLogin(nil, nil); fs.SetLoginUser("") }()
	}
	cl, err := localcluster.Start(lc)
	if err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		var se *localcluster.StartError
		if errors.As(err, &se) && se.Hint != "" {
			fmt.Fprintf(env.Stderr, "(%s)\n", se.Hint)
		}
		return 1
	}
	defer cl.Close()
	if cl.Formatted != "" {
		log.Info("local: formatted new storage", "dir", cl.NameDir, "clusterID", cl.Formatted)
	}
	defaultFS := cl.DefaultFS()
	home := ""
	if realm != nil {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := cl.WaitReady(wctx)
		if err == nil {
			home, err = realm.MakeHome(wctx, cl)
		}
		cancel()
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: the user's home directory: %v\n", err)
			return 1
		}
	}
	confDir := filepath.Join(abs, "conf")
	jtAddr := ""
	if cl.MapReduce != nil {
		jtAddr = cl.MapReduce.JobTrackerAddr()
	}
	var clientKeys map[string]string
	if realm != nil {
		clientKeys = realm.ClientConf()
	}
	hdfsKeys := cl.HAKeys()
	if scKeys != nil {
		hdfsKeys = maps.Clone(hdfsKeys)
		if hdfsKeys == nil {
			hdfsKeys = map[string]string{}
		}
		maps.Copy(hdfsKeys, scKeys)
	}
	if err := writeClientConf(confDir, defaultFS, hdfsKeys, jtAddr, clientKeys); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "strata local cluster running (Ctrl-C to stop)\n")
	if cl.Nameservice == "" {
		fmt.Fprintf(env.Stdout, "  NameNode RPC   %s\n", defaultFS)
		if a := cl.NameNode.HTTPAddr(); a != "" {
			fmt.Fprintf(env.Stdout, "  NameNode web   http://%s/  (metrics: /metrics)\n", a)
		}
	} else {
		printNameservice(env, cl)
	}
	for i, d := range cl.DataNodes {
		fmt.Fprintf(env.Stdout, "  DataNode %d     %s  (volumes: %s)\n", i, d.XferAddr(), localcluster.VolumeList(cl.Nodes[i].Volumes))
	}
	if cl.MapReduce != nil {
		fmt.Fprintf(env.Stdout, "  JobTracker     %s  (%d TaskTrackers, intermediate data under each DataNode's SSD directory)\n", jtAddr, cl.MapReduce.NumTaskTrackers())
		if w, ok := cl.MapReduce.(interface{ JobTrackerHTTPAddr() string }); ok && w.JobTrackerHTTPAddr() != "" {
			fmt.Fprintf(env.Stdout, "  JobTracker web http://%s/\n", w.JobTrackerHTTPAddr())
		}
	}
	fmt.Fprintf(env.Stdout, "  data           %s\n", abs)
	if realm != nil {
		printRealm(env, realm, cl, home)
	}
	if cl.Nameservice == "" {
		fmt.Fprintf(env.Stdout, "Use it with:\n  strata -D fs.defaultFS=%s dfs -ls /\nor, for the file system and MapReduce jobs on the trackers:\n  export STRATA_CONF_DIR=%s\n", defaultFS, confDir)
	} else {
		fmt.Fprintf(env.Stdout, "Use it with:\n  strata --config %s dfs -ls /\n  strata --config %s haadmin -getAllServiceState\nor, for any HDFS client (Hadoop's, colinmarc/hdfs) and MapReduce jobs on the trackers:\n  export HADOOP_CONF_DIR=%s\n", confDir, confDir, confDir)
	}
	<-ctx.Done()
	fmt.Fprintln(env.Stdout, "stopping")
	if err := cl.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	return 0
}

// printRealm says how to use a secure cluster: the user's principal and
// password, the kinit line, the client environment, and a SPNEGO request.
func printRealm(env *Env, r *localcluster.Realm, cl *localcluster.Cluster, home string) {
	fmt.Fprintf(env.Stdout, "Secure mode: Kerberos realm %s, KDC %s (%s)\n", r.KDC.Realm, r.KDC.Addr(), r.Dir)
	fmt.Fprintf(env.Stdout, "  superuser      nn (the NameNode's principal; this process is logged in as it)\n")
	fmt.Fprintf(env.Stdout, "  your home      %s (owned by %s; /tmp is world-writable)\n", home, r.User)
	fmt.Fprintf(env.Stdout, "  principal      %s  password %s  (also in %s)\n", r.KDC.Principal(r.User), r.Password, filepath.Join(r.Dir, r.User+".password"))
	fmt.Fprintf(env.Stdout, "  keytabs        %s\n", strings.Join([]string{r.Keytabs["nn"], r.Keytabs["dn"], r.Keytabs["jt"], r.Keytabs["tt"], r.Keytabs["HTTP"]}, " "))
	fmt.Fprintf(env.Stdout, "Get a ticket with:\n  %s\n", r.KinitLine())
	fmt.Fprintf(env.Stdout, "and give clients the same environment:\n  export %s\n", strings.Join(r.Env(), " "))
	if cl.NameNode != nil && cl.NameNode.HTTPAddr() != "" {
		_, port, _ := net.SplitHostPort(cl.NameNode.HTTPAddr())
		fmt.Fprintf(env.Stdout, "The web UIs and WebHDFS need SPNEGO (HTTP/%s), for example:\n  curl --negotiate -u : 'http://%s:%s/webhdfs/v1/?op=LISTSTATUS'\n",
			localcluster.SecureHost, localcluster.SecureHost, port)
	}
}

// localShortCircuit returns the keys that turn on short-circuit local
// reads for a local cluster in dir, as a Hadoop cluster whose clients run
// on the DataNodes' hosts is set up: the DataNodes listen on Unix sockets
// <dir>/run/dn<port>.sock, and clients (the tasks here among them) read
// the block files of those DataNodes' finalized replicas directly,
// checking the same block tokens and CRCs, with no copy through a TCP
// connection and the DataNode. Nil — reads over TCP, Hadoop's default —
// when c sets either key to something else (the values this function
// sets, read back from the cluster's own config directory, do not count),
// when emulated media are configured (their device models charge the
// DataNode's reads), when the socket path would be too long, or when a
// directory on it is not safe for a socket clients trust (safeSocketDir).
func localShortCircuit(c *conf.Configuration, dir string) map[string]string {
	const socketKey, readKey = "dfs.domain.socket.path", "dfs.client.read.shortcircuit"
	run := filepath.Join(dir, "run")
	pattern := filepath.Join(run, "dn_PORT.sock")
	if c.IsSet(socketKey) && c.Get(socketKey) != pattern || c.IsSet(readKey) && c.Get(readKey) != "true" || media.Enabled() {
		return nil
	}
	// sun_path holds the path and its NUL; ports have up to 5 digits.
	if len(pattern)-len("_PORT")+5 > len(syscall.RawSockaddrUnix{}.Path)-1 || os.MkdirAll(run, 0o755) != nil || safeSocketDir(run) != nil {
		return nil
	}
	// Sockets of earlier runs (their ports were free ones) are stale.
	if old, _ := filepath.Glob(filepath.Join(run, "dn*.sock")); len(old) > 0 {
		for _, f := range old {
			os.Remove(f)
		}
	}
	return map[string]string{socketKey: pattern, readKey: "true"}
}

const dropBehindKey = "dfs.datanode.drop.cache.behind.writes"

// localDropBehind says whether the DataNodes of a local cluster drop the
// blocks they write from the page cache once those are on disk (Hadoop's
// dfs.datanode.drop.cache.behind.writes, off by default there). They
// share one host's page cache: keeping what they write would cache each
// block once per replica, in memory the tasks and other data need, and
// take a fresh page for every page written where the kernel has free
// memory (on a VM that hands free pages back to its host, each costs a
// host fault; reused ones do not). Not when c sets the key, nor with
// emulated media (their device models charge every byte and have no
// page cache to drop).
func localDropBehind(c *conf.Configuration) bool {
	return !c.IsSet(dropBehindKey) && !media.Enabled()
}

// safeSocketDir checks, as Hadoop's DomainSocket does before it binds,
// that no other user can replace a socket in dir: dir and every directory
// above it is owned by this user or root and writable by no one else,
// unless it has the sticky bit (as /tmp).
func safeSocketDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	uid := uint32(os.Geteuid())
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok {
			return fmt.Errorf("%s is not a directory", p)
		}
		if st.Uid != uid && st.Uid != 0 {
			return fmt.Errorf("%s is owned by uid %d", p, st.Uid)
		}
		if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("%s is writable by others", p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// localHANameNodes is the size of `strata local -ha`'s nameservice: the
// smallest Raft group that survives a member's loss.
const localHANameNodes = 3

// haLocalConf is c for `strata local -ha`: unless c chooses them, the
// members' addresses are free loopback ports (localcluster picks them
// once and keeps them), since three members cannot share 8020 and 9870.
func haLocalConf(c *conf.Configuration) *conf.Configuration {
	c = c.Clone()
	for _, k := range []string{"dfs.namenode.rpc-address", "dfs.namenode.http-address"} {
		if !c.IsSet(k) {
			c.Set(k, "127.0.0.1:0")
		}
	}
	return c
}

// printNameservice lists the nameservice's members with their addresses
// and roles.
func printNameservice(env *Env, cl *localcluster.Cluster) {
	fmt.Fprintf(env.Stdout, "  Nameservice    %s  (hdfs://%s, %d NameNodes in one Raft group)\n", cl.Nameservice, cl.Nameservice, cl.NumNameNodes())
	for i, nn := range cl.NameNodes {
		nc := cl.NameNodeConfig(i)
		role := "stopped"
		if nn != nil {
			role = nn.ServiceState().String()
		}
		fmt.Fprintf(env.Stdout, "  NameNode %-5s RPC %s  web http://%s/  %s\n", nc.HA.ID, nc.RPCAddr, nc.HTTPAddr, role)
	}
}

// writeClientConf writes core-site.xml with fs.defaultFS (and extra, a
// secure cluster's client keys) in dir; hdfs-site.xml with hdfs (an HA
// nameservice's keys, as Hadoop's clients read one, and short-circuit
// reads'), if any; and, if jobTracker is set,
// mapred-site.xml sending jobs to it. A file this cluster does not need
// is removed, so the directory never points at another cluster.
func writeClientConf(dir, defaultFS string, hdfs map[string]string, jobTracker string, extra map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	core := conf.New()
	core.Set("fs.defaultFS", defaultFS)
	for k, v := range extra {
		core.Set(k, v)
	}
	if err := core.WriteXMLFile(filepath.Join(dir, "core-site.xml")); err != nil {
		return err
	}
	hdfsSite := filepath.Join(dir, "hdfs-site.xml")
	if len(hdfs) == 0 {
		if err := os.Remove(hdfsSite); err != nil && !os.IsNotExist(err) {
			return err
		}
	} else {
		hc := conf.New()
		for k, v := range hdfs {
			hc.Set(k, v)
		}
		if err := hc.WriteXMLFile(hdfsSite); err != nil {
			return err
		}
	}
	mapred := filepath.Join(dir, "mapred-site.xml")
	if jobTracker == "" {
		if err := os.Remove(mapred); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	mc := conf.New()
	mc.Set("mapreduce.framework.name", "classic")
	mc.Set("mapreduce.jobtracker.address", jobTracker)
	return mc.WriteXMLFile(mapred)
}
