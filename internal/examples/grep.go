package examples

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

const grepUsage = "grep <inDir> <outDir> <regex> [<group>]"

func init() {
	mapreduce.Register("grep-search", "grep-search <in> <tmp> <regex> [<group>]", newGrepSearch)
	mapreduce.Register("grep-sort", "grep-sort <tmp> <out>", newGrepSort)
	addCommand(Command{Name: "grep", Usage: grepUsage, Summary: "count the matches of a regex in the input, most frequent first",
		Run: runGrep})
}

// runGrep is Hadoop's Grep: a job counting every match (or regex group),
// then a job sorting the counts in decreasing order into one file.
func runGrep(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) < 3 || len(args) > 4 {
		return usageErr(grepUsage)
	}
	if _, err := regexp.Compile(args[2]); err != nil {
		return fmt.Errorf("grep: bad regex %q: %w", args[2], err)
	}
	tmp := fmt.Sprintf("grep-temp-%d", time.Now().UnixNano())
	if dir := path.Dir(args[1]); dir != "." {
		tmp = path.Join(dir, tmp)
	}
	defer func() {
		if fsys, p, err := fs.Resolve(context.Background(), tmp, env); err == nil {
			fsys.Delete(context.Background(), p, true)
			fsys.Close()
		}
	}()
	searchArgs := append([]string{args[0], tmp}, args[2:]...)
	if _, err := runJob(ctx, env, out, "grep-search", searchArgs); err != nil {
		return err
	}
	_, err := runJob(ctx, env, out, "grep-sort", []string{tmp, args[1]})
	return err
}

func newGrepSearch(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) < 3 {
		return nil, usageErr(grepUsage)
	}
	re, err := regexp.Compile(args[2])
	if err != nil {
		return nil, err
	}
	group := 0
	if len(args) == 4 {
		if group, err = strconv.Atoi(args[3]); err != nil || group < 0 || group > re.NumSubexp() {
			return nil, fmt.Errorf("grep: bad group %q for a regex with %d groups", args[3], re.NumSubexp())
		}
	}
	return &mapreduce.Job{
		Name: "grep-search", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
				for _, m := range re.FindAllSubmatchIndex(line, -1) {
					if m[2*group] < 0 {
						continue
					}
					if err := out.Emit(line[m[2*group]:m[2*group+1]], one); err != nil {
						return err
					}
				}
				return nil
			})
		},
		NewCombiner: func() mapreduce.Reducer { return sumCounts{} },
		NewReducer:  func() mapreduce.Reducer { return sumCounts{} },
		Input:       mapreduce.TextInputFormat{}, InputPaths: []string{args[0]},
		Output: mapreduce.KVFileOutputFormat{}, OutputPath: args[1],
		NumReducers: reducers(c),
	}, nil
}

func newGrepSort(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, usageErr("grep-sort <tmp> <out>")
	}
	return &mapreduce.Job{
		Name: "grep-sort", Conf: c,
		// Key: the count inverted (so larger counts sort first), then the
		// match, for a total, deterministic order.
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, match, count []byte, out mapreduce.Emitter) error {
				k := binary.BigEndian.AppendUint64(nil, ^binary.BigEndian.Uint64(count))
				return out.Emit(append(k, match...), match)
			})
		},
		NewReducer: func() mapreduce.Reducer {
			return mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
				n := ^binary.BigEndian.Uint64(key)
				for values.Next() {
					if err := out.Emit(strconv.AppendUint(nil, n, 10), values.Value()); err != nil {
						return err
					}
				}
				return nil
			})
		},
		Input: mapreduce.KVFileInputFormat{}, InputPaths: []string{args[0]},
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[1],
		NumReducers: 1,
	}, nil
}

var _ = os.Stderr
