// Command sortbench measures strata's map-side sort (package spill) on
// the records bench/sort.sh gives GNU sort. It is a benchmark tool, not
// part of the strata binary.
//
//	sortbench gen  -n N -o FILE                      write N records
//	sortbench sort -i FILE -dir DIR [-mb 100] [-codec none]
//	sortbench dump -dir DIR -o FILE [-codec none]    the sorted records as text
//
// A record is 100 bytes: a 10-byte key of printable ASCII (! to ~), 89
// printable bytes of value and a newline, so that `LC_ALL=C sort` sorts
// the very same bytes as lines. sort pushes every record through a
// spill.Collector with one partition (key = the first 10 bytes, value =
// the other 90) and writes the merged output to DIR/sortbench/file.out;
// dump turns that back into lines, to compare with GNU sort's output.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/subcmd"
)

const recLen = 100

func main() {
	subcmd.Main("sortbench", "sortbench gen -n N -o FILE | sort -i FILE -dir DIR [-mb MiB] [-codec C] | dump -dir DIR -o FILE [-codec C]", map[string]func([]string) error{
		"gen":  gen,
		"sort": sortCmd,
		"dump": dump,
	})
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	n := fs.Int("n", 2_000_000, "records")
	out := fs.String("o", "", "output file")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Parse(args)
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(*seed, *seed))
	var r [recLen]byte
	for i := range *n {
		for j := range 10 {
			r[j] = byte('!' + rng.IntN(94))
		}
		v := strconv.AppendInt(r[10:10], int64(i), 10)
		for j := 10 + len(v); j < recLen-1; j++ {
			r[j] = byte('A' + (i+j)%26)
		}
		r[recLen-1] = '\n'
		w.Write(r[:])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func sortCmd(args []string) error {
	fs := flag.NewFlagSet("sort", flag.ExitOnError)
	in := fs.String("i", "", "input file")
	dir := fs.String("dir", "", "local dir (mapreduce.cluster.local.dir)")
	mb := fs.Int64("mb", 100, "sort buffer, MiB (mapreduce.task.io.sort.mb)")
	codecName := fs.String("codec", "none", "map output codec")
	fs.Parse(args)
	codec, err := spill.ParseCodec(*codecName)
	if err != nil {
		return err
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := spill.NewCollector(spill.Config{Partitions: 1, SortBytes: *mb << 20, Codec: codec,
		LocalDirs: []string{*dir}, Name: "sortbench"})
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		rec, err := r.Peek(recLen)
		if err == io.EOF && len(rec) == 0 {
			break
		}
		if err != nil {
			c.Abort()
			return fmt.Errorf("record %d: %w", n, err)
		}
		if err := c.Collect(0, rec[:10], rec[10:]); err != nil {
			c.Abort()
			return err
		}
		r.Discard(recLen)
		n++
	}
	out, err := c.Close()
	if err != nil {
		return err
	}
	fmt.Println(n, out.Path)
	return nil
}

func dump(args []string) error {
	fs := flag.NewFlagSet("dump", flag.ExitOnError)
	dir := fs.String("dir", "", "local dir given to sort")
	out := fs.String("o", "", "output file")
	codecName := fs.String("codec", "none", "map output codec")
	fs.Parse(args)
	codec, err := spill.ParseCodec(*codecName)
	if err != nil {
		return err
	}
	base := filepath.Join(*dir, "sortbench")
	idx, err := spill.ReadIndex(filepath.Join(base, spill.OutputIndexFile))
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(base, spill.OutputFile))
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(o, 1<<20)
	for _, e := range idx {
		it, err := spill.OpenSegment(io.NewSectionReader(f, e.Offset, e.PartLength), codec, e.PartLength, e.RawLength)
		if err != nil {
			return err
		}
		for it.Next() {
			w.Write(it.Key())
			w.Write(it.Value())
		}
		if err := it.Err(); err != nil {
			return err
		}
		it.Close()
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return o.Close()
}
