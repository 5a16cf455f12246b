package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/storage"
)

func init() {
	register(command{name: "mover", summary: "move replicas to the storage types of their policy: mover -p PATH...", run: runMover})
}

// runMover asks the NameNode to place the replicas of every file under the
// paths by their storage policy (HDFS's satisfyStoragePolicy) and waits
// until they are, printing progress. Hadoop's Mover talks to DataNodes
// itself; strata's NameNode schedules the moves (on the same node when it
// has a volume of the wanted type) and the command watches.
func runMover(ctx context.Context, env *Env, args []string) int {
	var paths []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-p":
			for i+1 < len(args) && args[i+1] != "" && args[i+1][0] != '-' {
				paths = append(paths, args[i+1])
				i++
			}
		default:
			fmt.Fprintf(env.Stderr, "mover: unexpected argument %q\n", args[i])
			fmt.Fprintln(env.Stderr, "Usage: strata mover -p <path>...")
			return 1
		}
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mover: %v\n", err)
		return 1
	}
	defer c.Close()
	timeout, err := env.Conf.GetDuration("strata.mover.timeout", time.Second)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mover: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, p := range paths {
		if err := c.SatisfyStoragePolicy(ctx, p); err != nil {
			fmt.Fprintf(env.Stderr, "mover: %s\n", errText(err))
			return 1
		}
	}
	start := time.Now()
	for {
		misplaced, total, err := countMisplaced(ctx, c, paths)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mover: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "%s: %d of %d blocks placed by policy\n", time.Since(start).Round(time.Second), total-misplaced, total)
		if misplaced == 0 {
			fmt.Fprintln(env.Stdout, "Mover Successful: all blocks satisfy the specified storage policy.")
			return 0
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(env.Stderr, "mover: %d blocks still misplaced after %v\n", misplaced, timeout)
			return 1
		case <-time.After(2 * time.Second):
		}
	}
}

// countMisplaced walks the paths and counts blocks whose replicas' storage
// types do not match their file's policy.
func countMisplaced(ctx context.Context, c *hdfs.Client, paths []string) (misplaced, total int, err error) {
	var walk func(p string) error
	walk = func(p string) error {
		entries, err := c.List(ctx, p)
		if err != nil {
			return err
		}
		for _, st := range entries {
			if st.IsDir {
				if st.Path != p {
					if err := walk(st.Path); err != nil {
						return err
					}
				}
				continue
			}
			pol, err := c.GetStoragePolicy(ctx, st.Path)
			if err != nil {
				return err
			}
			p, _ := storage.ByName(pol.Name)
			want := p.ChooseTypes(st.Replication)
			locs, err := c.BlockLocations(ctx, st.Path)
			if err != nil {
				return err
			}
			for _, b := range locs {
				total++
				if !sameTypes(want, b.StorageTypes) {
					misplaced++
				}
			}
		}
		return nil
	}
	for _, p := range paths {
		if err = walk(p); err != nil {
			return
		}
	}
	return
}

func sameTypes(want, got []storage.Type) bool {
	if len(want) != len(got) {
		return false
	}
	count := map[storage.Type]int{}
	for _, t := range want {
		count[t]++
	}
	for _, t := range got {
		count[t]--
		if count[t] < 0 {
			return false
		}
	}
	return true
}
