package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs" // registers hdfs://
	"github.com/stratafs/strata/internal/dfsio"
)

func init() {
	register(command{name: "testdfsio", summary: "Hadoop's TestDFSIO: -write | -read | -append | -truncate | -clean -nrFiles N -fileSize S", run: runTestDFSIO})
}

// runTestDFSIO is `hadoop jar hadoop-mapreduce-client-jobclient-tests.jar
// TestDFSIO ...`: job progress on stderr, the report on stdout and
// appended to the results file.
func runTestDFSIO(ctx context.Context, env *Env, args []string) int {
	o, err := dfsio.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "testdfsio: %v\nUsage: strata testdfsio %s\n", err, dfsio.Usage)
		return 2
	}
	if _, err := dfsio.Run(ctx, fs.Env{Conf: env.Conf, User: fs.CurrentUser()}, o, env.Stdout, env.Stderr); err != nil {
		fmt.Fprintf(env.Stderr, "testdfsio: %s\n", strings.TrimPrefix(err.Error(), "dfsio: "))
		return 1
	}
	return 0
}
