// Package cli implements the strata command's subcommands. cmd/strata only
// calls Main; tests call Main (or a subcommand) directly.
//
// Every command accepts Hadoop's generic options anywhere among its
// arguments: -D key=value (or -Dkey=value), --config DIR, -conf FILE,
// -fs URI and -jt host:port.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/stratafs/strata/conf"
)

// Env is what a subcommand runs with.
type Env struct {
	Conf   *conf.Configuration
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

var commands []command

func register(c command) { commands = append(commands, c) }

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Main runs the strata command line and returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g, rest, err := conf.ParseGenericOptions(args)
	if err != nil {
		fmt.Fprintf(stderr, "strata: %v\n", err)
		return 2
	}
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help" {
		usage(stdout)
		if len(rest) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := lookup(rest[0])
	if !ok {
		fmt.Fprintf(stderr, "strata: unknown command %q\n", rest[0])
		usage(stderr)
		return 2
	}
	c, err := g.Build()
	if err != nil {
		fmt.Fprintf(stderr, "strata: %v\n", err)
		return 1
	}
	for _, w := range c.Warnings() {
		fmt.Fprintf(stderr, "WARN %s\n", w)
	}
	if err := clientLogin(rest[0], c, stderr); err != nil {
		fmt.Fprintf(stderr, "strata: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Conf: c, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	defer startProfile(stderr)()
	return cmd.run(ctx, env, rest[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: strata [--config DIR] [-D key=value ...] COMMAND [ARGS]")
	fmt.Fprintln(w, "\nCommands:")
	sorted := append([]command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nGeneric options, accepted anywhere among a command's arguments:")
	fmt.Fprintln(w, "  -D key=value      set a configuration key (Hadoop's names: dfs.replication, ...)")
	fmt.Fprintln(w, "  --config DIR      read *-site.xml from DIR (default $STRATA_CONF_DIR, then $HADOOP_CONF_DIR)")
	fmt.Fprintln(w, "  -conf FILE        read one more configuration file")
	fmt.Fprintln(w, "  -fs URI           set fs.defaultFS")
}

// logger returns the daemons' logger: text on stderr, level from
// STRATA_LOG_LEVEL (debug, info, warn, error; default info).
func logger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("STRATA_LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
