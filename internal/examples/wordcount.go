package examples

import (
	"context"
	"encoding/binary"
	"io"
	"strconv"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

const wordcountUsage = "wordcount <in> [<in>...] <out>"

func init() {
	mapreduce.Register("wordcount", wordcountUsage, newWordCount)
	addCommand(Command{Name: "wordcount", Usage: wordcountUsage, Summary: "count the words in the input files",
		Run: func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
			if err := needArgs(args, 2, wordcountUsage); err != nil {
				return err
			}
			_, err := runJob(ctx, env, out, "wordcount", args)
			return err
		}})
}

// isSpace are the separators of Hadoop's WordCount (StringTokenizer's
// default delimiters).
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

func newWordCount(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) < 2 {
		return nil, usageErr(wordcountUsage)
	}
	return &mapreduce.Job{
		Name: "word count", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
				for i := 0; i < len(line); {
					for i < len(line) && isSpace(line[i]) {
						i++
					}
					j := i
					for j < len(line) && !isSpace(line[j]) {
						j++
					}
					if j > i {
						if err := out.Emit(line[i:j], one); err != nil {
							return err
						}
					}
					i = j
				}
				return nil
			})
		},
		NewCombiner: func() mapreduce.Reducer { return sumCounts{} },
		NewReducer: func() mapreduce.Reducer {
			return mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
				var n uint64
				for values.Next() {
					n += binary.BigEndian.Uint64(values.Value())
				}
				return out.Emit(key, strconv.AppendUint(nil, n, 10))
			})
		},
		Input: mapreduce.TextInputFormat{}, InputPaths: args[:len(args)-1],
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[len(args)-1],
		NumReducers: reducers(c),
	}, nil
}

// reducers is mapreduce.job.reduces (Hadoop's default 1).
func reducers(c *conf.Configuration) int {
	n, err := c.GetInt("mapreduce.job.reduces")
	if err != nil || n < 0 {
		return 1
	}
	return int(n)
}
