// Package subcmd runs the subcommands of the project's small tools
// (bench/cmd/nnscale, internal/spill/cmd/sortbench): the first argument
// names the function that gets the rest.
package subcmd

import (
	"fmt"
	"os"
)

// Main runs cmds[os.Args[1]] with the remaining arguments and exits 1
// with "name: error" if it fails; with no or an unknown subcommand it
// prints "usage: " + usage and exits 2.
func Main(name, usage string, cmds map[string]func(args []string) error) {
	if len(os.Args) < 2 || cmds[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: "+usage)
		os.Exit(2)
	}
	if err := cmds[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
