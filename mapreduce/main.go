package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/taskrun"
)

// Main is the entry point of a user's job program: it parses Hadoop's
// generic options (-D key=value, --config DIR, -fs URI, ...), then runs
// the registered job named by the first argument with the remaining
// arguments, and exits with its status:
//
//	func main() {
//		mapreduce.Register("wordlength", "wordlength <in> <out>", newWordLength)
//		mapreduce.Main()
//	}
//
//	$ wordlength-prog -D mapreduce.job.reduces=4 wordlength in out
//
// Importing github.com/stratafs/strata/hdfs (for hdfs:// paths) is the
// program's choice; Main's caller usually does.
//
// Submitted to a cluster (mapreduce.framework.name=classic), the program
// uploads itself to the staging directory and the TaskTrackers run it, as
// `<program> task`, for every attempt of its jobs.
func Main() {
	if len(os.Args) == 2 && os.Args[1] == "task" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := taskrun.Main(ctx, os.Stdin, os.Stdout)
		stop()
		os.Exit(code)
	}
	shipExecutable = true
	os.Exit(MainArgs(os.Args[1:], os.Stdout, os.Stderr))
}

// MainArgs is Main with explicit arguments and outputs; it returns the
// exit status.
func MainArgs(args []string, stdout, stderr io.Writer) int {
	g, rest, err := conf.ParseGenericOptions(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "Usage: <program> [generic options] <job> [job args]\nJobs:")
		for _, j := range Jobs() {
			fmt.Fprintf(stderr, "  %s\n", j[1])
		}
		return 2
	}
	c, err := g.Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range c.Warnings() {
		fmt.Fprintf(stderr, "WARN %s\n", w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	job, err := NewJob(rest[0], rest[1:], c)
	if err != nil {
		if errors.Is(err, ErrUnknownJob) {
			fmt.Fprintf(stderr, "%v; known jobs:\n", err)
			for _, j := range Jobs() {
				fmt.Fprintf(stderr, "  %s\n", j[1])
			}
			return 2
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if _, err := Submit(ctx, job, fs.Env{Conf: c, User: fs.CurrentUser()}, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
