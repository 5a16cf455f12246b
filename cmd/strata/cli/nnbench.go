package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/nnbench"
)

func init() {
	register(command{name: "nnbench", summary: "NameNode load generator: nnbench -op create_write|open_read|rename|delete|mkdirs|fileStatus|all -threads T -ops N", run: runNNBench})
}

// runNNBench drives the NameNode of fs.defaultFS with metadata operations
// from many clients (Hadoop's NNThroughputBenchmark, over real RPC): the
// report on stdout, progress on stderr.
func runNNBench(ctx context.Context, env *Env, args []string) int {
	cfg, err := nnbench.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nnbench: %v\nUsage: strata nnbench %s\n", err, nnbench.Usage)
		return 2
	}
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nnbench: %v\n", err)
		return 1
	}
	if u.Scheme != "hdfs" {
		fmt.Fprintf(env.Stderr, "nnbench: FileSystem %s is not an HDFS file system (set fs.defaultFS, e.g. -fs hdfs://127.0.0.1:8020)\n", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String())
		return 1
	}
	cfg.Addrs, err = nameservice.Resolve(env.Conf, u.Host)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nnbench: %v\n", err)
		return 1
	}
	cfg.User = fs.CurrentUser()
	cfg.Umask = fs.Umask(env.Conf)
	if v, err := env.Conf.GetInt("dfs.replication"); err == nil {
		cfg.Replication = int(v)
	}
	if v, err := env.Conf.GetBytes("dfs.blocksize"); err == nil {
		cfg.BlockSize = v
	}
	cfg.Log = env.Stderr
	if _, err := nnbench.Run(ctx, cfg, env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "nnbench: %s\n", strings.TrimPrefix(err.Error(), "nnbench: "))
		return 1
	}
	return 0
}
