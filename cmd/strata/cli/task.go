package cli

import (
	"context"

	"github.com/stratafs/strata/internal/taskrun"
	_ "github.com/stratafs/strata/mapreduce" // registers the task runner
)

func init() {
	register(command{name: "task", summary: "run one MapReduce task attempt (a TaskTracker's child): JSON spec on stdin, JSON result on stdout", run: runTask})
}

func runTask(ctx context.Context, env *Env, args []string) int {
	return taskrun.Main(ctx, env.Stdin, env.Stdout)
}
