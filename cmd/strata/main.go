// Command strata is Hadoop rewritten in Go: HDFS-compatible NameNode and
// DataNodes, MapReduce, the Hadoop benchmarks, and the tools to measure
// what fast storage buys. Run "strata help" for the commands.
package main

import (
	"os"

	"github.com/stratafs/strata/cmd/strata/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
