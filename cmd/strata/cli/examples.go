package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/examples"
)

func init() {
	register(command{name: "examples", summary: "run an example MapReduce program: wordcount, grep, sort, randomwriter, ...", run: runExamples})
}

// runExamples is `hadoop jar hadoop-mapreduce-examples.jar <name> ...`.
func runExamples(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "Usage: strata examples <program> [args]\nValid program names are:")
		for _, c := range examples.List() {
			fmt.Fprintf(env.Stderr, "  %s: %s\n", c.Name, c.Summary)
		}
		return 2
	}
	c, ok := examples.Lookup(args[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "Unknown program '%s' chosen.\n", args[0])
		return runExamples(ctx, env, nil)
	}
	err := c.Run(ctx, fs.Env{Conf: env.Conf, User: fs.CurrentUser()}, args[1:], env.Stderr)
	var ue *examples.UsageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "Usage: strata examples %s\n", ue.Usage)
		return 2
	case err != nil:
		fmt.Fprintf(env.Stderr, "%s: %v\n", c.Name, err)
		return 1
	}
	return 0
}
