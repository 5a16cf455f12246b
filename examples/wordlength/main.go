// Command wordlength is an example of a MapReduce job written as a
// separate Go program against strata's public API: it counts how many
// words of each length its input has.
//
//	go build -o wordlength ./examples/wordlength
//	./wordlength wordlength <in> <out>
//	./wordlength -fs hdfs://127.0.0.1:8020 -D mapreduce.job.reduces=2 wordlength /in /out
//
// On a cluster (-D mapreduce.framework.name=classic -D
// mapreduce.jobtracker.address=host:port, or STRATA_CONF_DIR of `strata
// local`) the program uploads itself and the TaskTrackers run it for its
// tasks.
//
// Output lines are "<length>\t<count>", lengths in numeric order.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/stratafs/strata/conf"
	_ "github.com/stratafs/strata/hdfs" // hdfs:// paths
	"github.com/stratafs/strata/mapreduce"
)

func main() {
	mapreduce.Register("wordlength", "wordlength <in> <out>", newJob)
	mapreduce.Main()
}

func newJob(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("usage: wordlength <in> <out>")
	}
	one := binary.BigEndian.AppendUint64(nil, 1)
	sum := mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
		var n uint64
		for values.Next() {
			n += binary.BigEndian.Uint64(values.Value())
		}
		return out.Emit(key, binary.BigEndian.AppendUint64(nil, n))
	})
	reduces, _ := c.GetInt("mapreduce.job.reduces")
	return &mapreduce.Job{
		Name: "word length", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
				for _, w := range bytes.Fields(line) {
					// Big-endian lengths sort numerically as bytes.
					if err := out.Emit(binary.BigEndian.AppendUint32(nil, uint32(len(w))), one); err != nil {
						return err
					}
				}
				return nil
			})
		},
		NewCombiner: func() mapreduce.Reducer { return sum },
		NewReducer: func() mapreduce.Reducer {
			return mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
				var n uint64
				for values.Next() {
					n += binary.BigEndian.Uint64(values.Value())
				}
				return out.Emit(strconv.AppendUint(nil, uint64(binary.BigEndian.Uint32(key)), 10), strconv.AppendUint(nil, n, 10))
			})
		},
		Input: mapreduce.TextInputFormat{}, InputPaths: args[:1],
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[1],
		NumReducers: int(max(reduces, 1)),
	}, nil
}
