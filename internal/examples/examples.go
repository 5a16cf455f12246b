// Package examples holds strata's built-in MapReduce programs, run as
// `strata examples <name> ...` with Hadoop's arguments: wordcount, grep,
// sort, randomwriter and randomtextwriter. Their jobs are registered with
// package mapreduce, so that a cluster's TaskTrackers can run their tasks.
package examples

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

// Command is an example program.
type Command struct {
	Name, Usage, Summary string
	Run                  func(ctx context.Context, env fs.Env, args []string, out io.Writer) error
}

var commands = map[string]Command{}

func addCommand(c Command) { commands[c.Name] = c }

// Lookup returns the example named name.
func Lookup(name string) (Command, bool) {
	c, ok := commands[name]
	return c, ok
}

// List returns the examples sorted by name.
func List() []Command {
	var out []Command
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// UsageError is a wrong command line; its text is the usage.
type UsageError struct{ Usage string }

func (e *UsageError) Error() string { return "Usage: " + e.Usage }

// runJob builds a registered job and submits it.
func runJob(ctx context.Context, env fs.Env, out io.Writer, name string, args []string) (*mapreduce.Result, error) {
	job, err := mapreduce.NewJob(name, args, env.Conf)
	if err != nil {
		return nil, err
	}
	return mapreduce.Submit(ctx, job, env, out)
}

// sumCounts adds 8-byte big-endian counts; it is the combiner of the
// counting jobs.
type sumCounts struct{}

func (sumCounts) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	var n uint64
	for values.Next() {
		n += binary.BigEndian.Uint64(values.Value())
	}
	return out.Emit(key, binary.BigEndian.AppendUint64(nil, n))
}

var one = binary.BigEndian.AppendUint64(nil, 1)

func usageErr(u string) error { return &UsageError{Usage: u} }

func needArgs(args []string, n int, usage string) error {
	if len(args) < n {
		return usageErr(usage)
	}
	return nil
}

var _ = fmt.Sprint
