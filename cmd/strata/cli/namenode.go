package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratafs/strata/internal/namenode"
)

func init() {
	register(command{name: "namenode", summary: "run the NameNode (-format to initialise its storage)", run: runNameNode})
}

func runNameNode(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("namenode", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	format := fl.Bool("format", false, "initialise the storage directory (dfs.namenode.name.dir)")
	force := fl.Bool("force", false, "with -format: re-format without asking")
	nonInteractive := fl.Bool("nonInteractive", false, "with -format: never ask; refuse to re-format")
	bootstrap := fl.Bool("bootstrapStandby", false, "HA: initialise the storage of a new member of the nameservice with the namespace identity of a running member (its Raft state then comes from the active)")
	recover := fl.Bool("recover", false, "cut a damaged edit log at its first bad record, save a checkpoint and exit (records after the damage are lost)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "namenode: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	cfg, err := namenode.ConfigFrom(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "namenode: %v\n", err)
		return 1
	}
	cfg.Logger = logger(env.Stderr)
	if *format {
		return formatNameNode(env, cfg, *force, *nonInteractive)
	}
	if *bootstrap {
		v, err := namenode.BootstrapStandby(cfg, *force)
		if err != nil {
			fmt.Fprintf(env.Stderr, "namenode: bootstrapStandby: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "Storage directory %s has been successfully bootstrapped as %s of %s (clusterID %s, namespaceID %d, block pool %s).\n",
			cfg.NameDir, cfg.HA.ID, cfg.HA.Nameservice, v.ClusterID, v.NamespaceID, v.BlockPoolID)
		return 0
	}
	cfg.Recover = *recover
	nn, err := namenode.New(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "namenode: %v\n", err)
		return 1
	}
	if *recover {
		err := errors.Join(nn.Checkpoint(), nn.Close())
		if err != nil {
			fmt.Fprintf(env.Stderr, "namenode: recovery: %v\n", err)
			return 1
		}
		fmt.Fprintln(env.Stdout, "Recovery complete: the namespace was loaded and saved in a new checkpoint.")
		return 0
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		fmt.Fprintf(env.Stderr, "namenode: %v\n", err)
		return 1
	}
	<-ctx.Done()
	cfg.Logger.Info("namenode: shutting down")
	if err := nn.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "namenode: %v\n", err)
		return 1
	}
	return 0
}

// formatNameNode formats every storage directory of dfs.namenode.name.dir
// with one namespace. As Hadoop's confirmFormat, it asks about each
// directory that is already formatted; one "no" aborts them all.
func formatNameNode(env *Env, cfg namenode.Config, force, nonInteractive bool) int {
	dirs := cfg.StorageDirs()
	in := bufio.NewReader(env.Stdin)
	confirmed := false
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "current", "VERSION")); err != nil || force {
			continue
		}
		if nonInteractive {
			fmt.Fprintf(env.Stderr, "namenode: storage directory %s is already formatted; not re-formatting (-nonInteractive)\n", dir)
			return 1
		}
		fmt.Fprintf(env.Stderr, "Re-format filesystem in Storage Directory %s ? (Y or N) ", dir)
		line, _ := in.ReadString('\n')
		if a := strings.TrimSpace(line); a != "Y" && a != "y" {
			fmt.Fprintln(env.Stderr, "Format aborted in", dir)
			return 1
		}
		confirmed = true
	}
	v, err := namenode.Format(cfg, force || confirmed)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			fmt.Fprintf(env.Stderr, "namenode: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stderr, "namenode: format: %v\n", err)
		return 1
	}
	for _, dir := range dirs {
		fmt.Fprintf(env.Stdout, "Storage directory %s has been successfully formatted (clusterID %s, namespaceID %d).\n", dir, v.ClusterID, v.NamespaceID)
	}
	return 0
}
