package cli

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/internal/streaming" // registers the streaming job
	"github.com/stratafs/strata/mapreduce"
)

func init() {
	register(command{name: "streaming", summary: "run a MapReduce job with executables as mapper and reducer (Hadoop Streaming)", run: runStreaming})
}

func runStreaming(ctx context.Context, env *Env, args []string) int {
	job, err := mapreduce.NewJob("streaming", args, env.Conf)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 2
	}
	if _, err := mapreduce.Submit(ctx, job, fs.Env{Conf: env.Conf, User: fs.CurrentUser()}, env.Stderr); err != nil {
		fmt.Fprintf(env.Stderr, "streaming: %v\n", err)
		return 1
	}
	return 0
}
