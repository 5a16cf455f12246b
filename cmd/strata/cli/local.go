package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/namenode"
)

func init() {
	register(command{name: "local", summary: "run an embedded cluster in this process (data under ./strata-data)", run: runLocal})
}

// runLocal starts an embedded cluster: today a NameNode whose storage is
// under the data directory, formatted on first use. It writes a config
// directory that points clients at it and runs until interrupted.
func runLocal(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("local", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	dataDir := fl.String("data", "strata-data", "directory holding the cluster's storage and its config dir")
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

	defaultFS := "hdfs://" + nn.RPCAddr()
	confDir := filepath.Join(abs, "conf")
	if err := writeClientConf(confDir, defaultFS); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "strata local cluster running (Ctrl-C to stop)\n")
	fmt.Fprintf(env.Stdout, "  NameNode RPC   %s\n", defaultFS)
	if nn.HTTPAddr() != "" {
		fmt.Fprintf(env.Stdout, "  NameNode web   http://%s/  (metrics: /metrics)\n", nn.HTTPAddr())
	}
	fmt.Fprintf(env.Stdout, "  data           %s\n", abs)
	fmt.Fprintf(env.Stdout, "Use it with:\n  strata -D fs.defaultFS=%s dfs -ls /\nor:\n  export STRATA_CONF_DIR=%s\n", defaultFS, confDir)
	<-ctx.Done()
	fmt.Fprintln(env.Stdout, "stopping")
	if err := nn.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "local: %v\n", err)
		return 1
	}
	return 0
}

// writeClientConf writes core-site.xml with fs.defaultFS in dir.
func writeClientConf(dir, defaultFS string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := conf.New()
	c.Set("fs.defaultFS", defaultFS)
	f, err := os.Create(filepath.Join(dir, "core-site.xml"))
	if err != nil {
		return err
	}
	if err := c.WriteXML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
