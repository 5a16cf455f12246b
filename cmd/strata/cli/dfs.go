package cli

import (
	"context"

	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs" // registers hdfs://
	"github.com/stratafs/strata/internal/shell"
)

func init() {
	register(command{name: "dfs", summary: "run a file system command (Hadoop's 'hadoop fs'): -ls, -mkdir, -put, ...", run: runDFS})
	register(command{name: "fs", summary: "same as dfs", run: runDFS})
}

func runDFS(ctx context.Context, env *Env, args []string) int {
	return shell.Run(ctx, fs.Env{Conf: env.Conf, User: fs.CurrentUser()}, args, env.Stdout, env.Stderr)
}
