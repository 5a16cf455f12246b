package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/tasktracker"
)

func init() {
	register(command{name: "local", summary: "run an embedded cluster in this process (data under ./strata-data)", run: runLocal})
}

// runLocal starts an embedded cluster: a NameNode and N DataNodes (each
// with an SSD and a DISK directory) whose storage is under the data
// directory, formatted on first use. It writes a config
// directory that points clients at it and runs until interrupted.
func runLocal(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("local", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	dataDir := fl.String("data", "strata-data", "directory holding the cluster's storage and its config dir")
	numDN := fl.Int("datanodes", -1, "number of DataNodes (default strata.local.datanodes, 3)")
	noMR := fl.Bool("nomapreduce", false, "start no JobTracker and TaskTrackers")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	log := logger(env.Stderr)
	c := env.Conf.Clone()
	if !c.IsSet("dfs.namenode.safemode.extension") {
		// One process holds the whole cluster: once its DataNodes have
		// reported, there is nothing more to wait for.
		c.Set("dfs.namenode.safemode.extension", "0")
	}
	if !c.IsSet("dfs.namenode.name.dir") {
		c.Set("dfs.namenode.name.dir", filepath.Join(abs, "name"))
	}
	cfg, err := namenode.ConfigFrom(c)
	if err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	cfg.Logger = log
	if _, err := os.Stat(filepath.Join(cfg.NameDir, "current", "VERSION")); os.IsNotExist(err) {
		v, err := namenode.Format(cfg, false)
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: format %s: %v\n", cfg.NameDir, err)
			return 1
		}
		log.Info("local: formatted new storage", "dir", cfg.NameDir, "clusterID", v.ClusterID)
	}
	nn, err := namenode.New(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		fmt.Fprintf(env.Stderr, "local: %v\n(another strata or Hadoop may be using the port: choose others with -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0)\n", err)
		return 1
	}
	defer nn.Close()

	n := *numDN
	if n < 0 {
		v, err := c.GetInt("strata.local.datanodes")
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		n = int(v)
	}
	var dns []*datanode.DataNode
	defer func() {
		for _, d := range dns {
			d.Close()
		}
	}()
	for i := 0; i < n; i++ {
		dc, err := datanode.ConfigFrom(c, nn.RPCAddr())
		if err != nil && !c.IsSet("dfs.datanode.data.dir") {
			err = nil // the per-node directories below replace the default
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		base := filepath.Join(abs, fmt.Sprintf("dn%d", i))
		dc.Volumes = []fsdataset.VolumeConfig{
			{Path: filepath.Join(base, "ssd"), Type: storage.SSD},
			{Path: filepath.Join(base, "disk"), Type: storage.Disk},
		}
		dc.XferAddr, dc.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
		if i == 0 && c.IsSet("dfs.datanode.address") {
			dc.XferAddr = c.Get("dfs.datanode.address")
		}
		dc.Hostname = fmt.Sprintf("localhost-dn%d", i)
		dc.Logger = log.With("dn", i)
		d, err := datanode.New(dc)
		if err == nil {
			err = d.Start()
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: datanode %d: %v\n", i, err)
			return 1
		}
		dns = append(dns, d)
	}

	defaultFS := "hdfs://" + nn.RPCAddr()
	var jt *jobtracker.JobTracker
	var tts []*tasktracker.TaskTracker
	defer func() {
		for _, t := range tts {
			t.Close()
		}
		if jt != nil {
			jt.Close()
		}
	}()
	if !*noMR {
		// A JobTracker, and one TaskTracker per DataNode, named like it
		// (maps on its blocks count as data-local) and with its
		// intermediate data on that node's SSD directory.
		mc := c.Clone()
		if a := mc.Get("mapreduce.jobtracker.address"); a == "" || a == "local" {
			mc.Set("mapreduce.jobtracker.address", "127.0.0.1:8021")
		}
		jc, err := jobtracker.ConfigFrom(mc)
		if err != nil {
			fmt.Fprintf(env.Stderr, "local: %v\n", err)
			return 1
		}
		jc.Logger = log.With("daemon", "jobtracker")
		jt = jobtracker.New(jc)
		if err := jt.Start(); err != nil {
			jt = nil
			fmt.Fprintf(env.Stderr, "local: %v\n(choose another port with -D mapreduce.jobtracker.address=127.0.0.1:0, or -nomapreduce)\n", err)
			return 1
		}
		mc.Set("mapreduce.jobtracker.address", jt.Addr())
		for i := range dns {
			tc, err := tasktracker.ConfigFrom(mc)
			if err != nil {
				fmt.Fprintf(env.Stderr, "local: %v\n", err)
				return 1
			}
			if !c.IsSet("mapreduce.cluster.local.dir") {
				tc.LocalDirs = []string{filepath.Join(abs, fmt.Sprintf("dn%d", i), "ssd", "mapred-local")}
			}
			tc.HTTPAddr, tc.Host = "127.0.0.1:0", fmt.Sprintf("localhost-dn%d", i)
			tc.Logger = log.With("tt", i)
			t, err := tasktracker.New(tc)
			if err == nil {
				err = t.Start()
			}
			if err != nil {
				fmt.Fprintf(env.Stderr, "local: tasktracker %d: %v\n", i, err)
				return 1
			}
			tts = append(tts, t)
		}
	}
	confDir := filepath.Join(abs, "conf")
	jtAddr := ""
	if jt != nil {
		jtAddr = jt.Addr()
	}
	if err := writeClientConf(confDir, defaultFS, jtAddr); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "strata local cluster running (Ctrl-C to stop)\n")
	fmt.Fprintf(env.Stdout, "  NameNode RPC   %s\n", defaultFS)
	if nn.HTTPAddr() != "" {
		fmt.Fprintf(env.Stdout, "  NameNode web   http://%s/  (metrics: /metrics)\n", nn.HTTPAddr())
	}
	for i, d := range dns {
		fmt.Fprintf(env.Stdout, "  DataNode %d     %s  (volumes: [SSD] %s, [DISK] %s)\n", i, d.XferAddr(),
			filepath.Join(abs, fmt.Sprintf("dn%d", i), "ssd"), filepath.Join(abs, fmt.Sprintf("dn%d", i), "disk"))
	}
	if jt != nil {
		fmt.Fprintf(env.Stdout, "  JobTracker     %s  (%d TaskTrackers, intermediate data under each DataNode's SSD directory)\n", jt.Addr(), len(tts))
	}
	fmt.Fprintf(env.Stdout, "  data           %s\n", abs)
	fmt.Fprintf(env.Stdout, "Use it with:\n  strata -D fs.defaultFS=%s dfs -ls /\nor, for the file system and MapReduce jobs on the trackers:\n  export STRATA_CONF_DIR=%s\n", defaultFS, confDir)
	<-ctx.Done()
	fmt.Fprintln(env.Stdout, "stopping")
	if err := nn.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	return 0
}

// writeClientConf writes core-site.xml with fs.defaultFS in dir and, if
// jobTracker is set, mapred-site.xml sending jobs to it.
func writeClientConf(dir, defaultFS, jobTracker string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	core := conf.New()
	core.Set("fs.defaultFS", defaultFS)
	if err := writeSite(filepath.Join(dir, "core-site.xml"), core); err != nil {
		return err
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
	return writeSite(mapred, mc)
}

func writeSite(path string, c *conf.Configuration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WriteXML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
