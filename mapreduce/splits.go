package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// Configuration keys of the file input formats (Hadoop's FileInputFormat).
const (
	// KeySplitMinSize is the smallest split in bytes (default 1).
	KeySplitMinSize = "mapreduce.input.fileinputformat.split.minsize"
	// KeySplitMaxSize is the largest split in bytes (default unlimited).
	// Splits are max(minsize, min(maxsize, file block size)) bytes.
	KeySplitMaxSize = "mapreduce.input.fileinputformat.split.maxsize"
	// KeyInputDirRecursive makes an input directory contribute the files of
	// its subdirectories too (default false: subdirectories are skipped).
	KeyInputDirRecursive = "mapreduce.input.fileinputformat.input.dir.recursive"
)

// splitSlop is Hadoop's SPLIT_SLOP: the last split of a file may be up to
// 10% larger than the split size rather than leaving a small tail split.
const splitSlop = 1.1

// InvalidInputError lists every input path that matched nothing, as
// Hadoop's InvalidInputException. It wraps os.ErrNotExist.
type InvalidInputError struct {
	// Problems are lines like "Input path does not exist: file:/tmp/x" or
	// "Input Pattern hdfs://nn:8020/in/*.txt matches 0 files".
	Problems []string
}

func (e *InvalidInputError) Error() string {
	return "mapreduce: " + strings.Join(e.Problems, "\n")
}

func (e *InvalidInputError) Unwrap() error { return os.ErrNotExist }

// inputFile is one file an input path expands to.
type inputFile struct {
	fsys fs.FileSystem
	st   fs.FileStatus
}

// FileSplits divides the files named by paths into splits as Hadoop's
// FileInputFormat.getSplits does, for input formats reading files:
//
//   - Each path may be a file, a directory (its files are used; files
//     whose names start with "_" or "." are skipped, as are
//     subdirectories unless mapreduce.input.fileinputformat.input.dir.recursive
//     is true) or a glob (*, ?, [abc], [!abc], {a,b}) expanding to either.
//     A path that does not exist or a glob matching nothing is an
//     *InvalidInputError naming all such paths.
//   - A file that splittable (which may be nil: every file) accepts is cut
//     into pieces of max(minsize, min(maxsize, block size)) bytes, the last
//     piece up to 1.1 times that; others become one split each.
//   - Each split's Hosts are the hosts of the block holding its first byte
//     (none on file systems without fs.BlockLocator, such as file://),
//     without duplicates.
//   - An empty file gives one split of length 0 without hosts, as in Hadoop
//     (so a map-only job over it still writes an empty part file).
//
// Splits are returned largest first (ties in file and offset order), as
// Hadoop's JobSubmitter orders them, and numbered by Index in that order.
// Path holds the file's full URI. mapreduce.job.maps is ignored, as in
// Hadoop's new API: the input decides the number of maps.
func FileSplits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string, splittable func(uri string) bool) ([]InputSplit, error) {
	if c == nil {
		c = env.Conf
	}
	if env.Conf == nil {
		env.Conf = c
	}
	if c == nil {
		c = conf.New()
	}
	minSize, err := confInt(c, KeySplitMinSize, 1)
	if err != nil {
		return nil, err
	}
	minSize = max(minSize, 1)
	maxSize, err := confInt(c, KeySplitMaxSize, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	recursive, err := confBool(c, KeyInputDirRecursive, false)
	if err != nil {
		return nil, err
	}
	cache := fs.NewCache(env)
	defer cache.Close()
	files, err := listInputs(ctx, cache, paths, recursive)
	if err != nil {
		return nil, err
	}
	var splits []InputSplit
	for _, f := range files {
		uri := fs.Qualify(f.fsys, f.st.Path)
		length := f.st.Length
		if length == 0 {
			splits = append(splits, InputSplit{Path: uri})
			continue
		}
		var blocks []fs.BlockLocation
		if bl, ok := f.fsys.(fs.BlockLocator); ok {
			blocks, err = bl.FileBlockLocations(ctx, f.st.Path)
			if err != nil {
				return nil, fmt.Errorf("mapreduce: block locations of %s: %w", uri, err)
			}
		}
		if splittable != nil && !splittable(uri) {
			splits = append(splits, InputSplit{Path: uri, Length: length, Hosts: hostsAt(blocks, 0)})
			continue
		}
		blockSize := f.st.BlockSize
		if blockSize <= 0 {
			blockSize = fs.LocalBlockSize
		}
		size := max(minSize, min(maxSize, blockSize))
		remaining := length
		for float64(remaining)/float64(size) > splitSlop {
			off := length - remaining
			splits = append(splits, InputSplit{Path: uri, Start: off, Length: size, Hosts: hostsAt(blocks, off)})
			remaining -= size
		}
		if remaining > 0 {
			off := length - remaining
			splits = append(splits, InputSplit{Path: uri, Start: off, Length: remaining, Hosts: hostsAt(blocks, off)})
		}
	}
	sort.SliceStable(splits, func(i, j int) bool { return splits[i].Length > splits[j].Length })
	for i := range splits {
		splits[i].Index = i
	}
	return splits, nil
}

// hostsAt returns the hosts of the block holding offset off, without
// duplicates (several DataNodes may share a host).
func hostsAt(blocks []fs.BlockLocation, off int64) []string {
	for _, b := range blocks {
		if off >= b.Offset && off < b.Offset+b.Length {
			var out []string
			for _, h := range b.Hosts {
				dup := false
				for _, o := range out {
					dup = dup || o == h
				}
				if !dup {
					out = append(out, h)
				}
			}
			return out
		}
	}
	return nil
}

// hiddenName is Hadoop's FileInputFormat hiddenFileFilter: names starting
// with "_" (like _SUCCESS, _temporary) or "." are not input.
func hiddenName(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

// listInputs expands the input paths into files, as Hadoop's
// FileInputFormat.listStatus.
func listInputs(ctx context.Context, cache *fs.Cache, paths []string, recursive bool) ([]inputFile, error) {
	var out []inputFile
	var problems []string
	if len(paths) == 0 {
		return nil, errors.New("mapreduce: no input paths")
	}
	for _, arg := range paths {
		matches, glob, err := globInput(ctx, cache, arg)
		if err != nil {
			return nil, err
		}
		visible := matches[:0]
		for _, m := range matches {
			if !hiddenName(path.Base(m.st.Path)) {
				visible = append(visible, m)
			}
		}
		switch {
		case len(matches) == 0 && !glob:
			problems = append(problems, "Input path does not exist: "+qualifyArg(ctx, cache, arg))
			continue
		case len(visible) == 0:
			problems = append(problems, "Input Pattern "+qualifyArg(ctx, cache, arg)+" matches 0 files")
			continue
		}
		for _, m := range visible {
			if !m.st.IsDir {
				out = append(out, m)
				continue
			}
			files, err := listDir(ctx, m.fsys, m.st.Path, recursive)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		}
	}
	if len(problems) > 0 {
		return nil, &InvalidInputError{Problems: problems}
	}
	return out, nil
}

// qualifyArg shows an input argument as a full URI for messages.
func qualifyArg(ctx context.Context, cache *fs.Cache, arg string) string {
	fsys, p, err := cache.Resolve(ctx, arg)
	if err != nil {
		return arg
	}
	return fs.Qualify(fsys, p)
}

// listDir lists the visible files of dir, descending into subdirectories
// when recursive.
func listDir(ctx context.Context, fsys fs.FileSystem, dir string, recursive bool) ([]inputFile, error) {
	sts, err := fsys.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("mapreduce: list input %s: %w", fs.Qualify(fsys, dir), err)
	}
	var out []inputFile
	for _, st := range sts {
		if hiddenName(st.Name()) {
			continue
		}
		if !st.IsDir {
			out = append(out, inputFile{fsys: fsys, st: st})
			continue
		}
		if recursive {
			more, err := listDir(ctx, fsys, st.Path, true)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
	}
	return out, nil
}

// globInput expands one input argument. glob reports whether it had
// wildcards; without them the result is the path itself if it exists.
func globInput(ctx context.Context, cache *fs.Cache, arg string) (matches []inputFile, glob bool, err error) {
	if arg == "" {
		return nil, false, errors.New("mapreduce: empty input path")
	}
	patterns, err := fs.ExpandBraces(arg)
	if err != nil {
		return nil, false, fmt.Errorf("mapreduce: input %q: %w", arg, err)
	}
	glob = len(patterns) > 1
	for _, p := range patterns {
		glob = glob || fs.HasWildcard(p)
	}
	seen := map[string]bool{}
	for _, p := range patterns {
		if !glob {
			p = fs.UnescapeGlob(p)
		}
		fsys, abs, err := cache.Resolve(ctx, p)
		if err != nil {
			return nil, glob, fmt.Errorf("mapreduce: input %q: %w", arg, err)
		}
		var sts []fs.FileStatus
		if glob {
			sts, err = fs.Glob(ctx, fsys, abs)
		} else {
			var st fs.FileStatus
			st, err = fsys.Stat(ctx, abs)
			if err == nil {
				sts = []fs.FileStatus{st}
			} else if missing(err) {
				err = nil
			}
		}
		if err != nil {
			return nil, glob, fmt.Errorf("mapreduce: input %q: %w", arg, err)
		}
		for _, st := range sts {
			key := fs.Qualify(fsys, st.Path)
			if !seen[key] {
				seen[key] = true
				matches = append(matches, inputFile{fsys: fsys, st: st})
			}
		}
	}
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].st.Path < matches[j].st.Path })
	return matches, glob, nil
}

// missing reports errors meaning there is nothing at a path.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, fs.ErrNotDir)
}

// unset key.
func confInt(c *conf.Configuration, key string, def int64) (int64, error) {
	if c == nil || c.GetTrimmed(key) == "" {
		return def, nil
	}
	v, err := c.GetBytes(key)
	if err != nil {
		return 0, fmt.Errorf("mapreduce: %w", err)
	}
	return v, nil
}

// confBool reads a boolean with a default for an unset key.
func confBool(c *conf.Configuration, key string, def bool) (bool, error) {
	if c == nil || c.GetTrimmed(key) == "" {
		return def, nil
	}
	v, err := c.GetBool(key)
	if err != nil {
		return false, fmt.Errorf("mapreduce: %w", err)
	}
	return v, nil
}
