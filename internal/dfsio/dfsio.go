package dfsio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/mapreduce"
)

// BaseDir returns the benchmark's base directory as configured:
// test.build.data, else /benchmarks/TestDFSIO.
func BaseDir(env fs.Env) string {
	if env.Conf != nil {
		if v := env.Conf.GetTrimmed(KeyBaseDir); v != "" {
			return v
		}
	}
	return DefaultBaseDir
}

// Run runs the benchmark o on the file system of the base directory
// (BaseDir; fs.defaultFS unless it is a URI). Progress and Hadoop's log
// lines go to logw; the report goes to out and is appended to o.ResFile.
// For Cleanup it deletes the base directory and returns a nil Report.
func Run(ctx context.Context, env fs.Env, o Options, out, logw io.Writer) (*Report, error) {
	env = env.WithDefaults()
	if o.BufferSize < 1 || o.NrFiles < 1 || o.FileSize < 0 {
		return nil, fmt.Errorf("dfsio: bad options: %d files, %d bytes each, buffer %d", o.NrFiles, o.FileSize, o.BufferSize)
	}
	if o.ResFile == "" {
		o.ResFile = DefaultResFile
	}
	logf := func(format string, args ...any) { fmt.Fprintf(logw, "INFO fs.TestDFSIO: "+format+"\n", args...) }
	base := BaseDir(env)
	logf("TestDFSIO.1.8")
	logf("nrFiles = %d", o.NrFiles)
	logf("nrBytes (MB) = %s", javaFloat(toMB(o.FileSize)))
	logf("bufferSize = %d", o.BufferSize)
	if o.SkipSize > 0 {
		logf("skipSize = %d", o.SkipSize)
	}
	logf("baseDir = %s", base)
	if o.Compression != "" {
		logf("compressionClass = %s", o.Compression)
	}

	fsys, basePath, err := fs.Resolve(ctx, base, env)
	if err != nil {
		return nil, fmt.Errorf("dfsio: base directory %s: %w", base, err)
	}
	defer fsys.Close()
	baseURI := fs.Qualify(fsys, basePath)
	join := func(elems ...string) string {
		return strings.TrimSuffix(basePath, "/") + "/" + strings.Join(elems, "/")
	}

	if o.StoragePolicy != "" {
		if err := checkStoragePolicy(ctx, fsys, o.StoragePolicy); err != nil {
			return nil, err
		}
		logf("storagePolicy = %s", o.StoragePolicy)
	}
	if o.Type == Cleanup {
		logf("Cleaning up test files")
		if err := fsys.Delete(ctx, basePath, true); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("dfsio: clean %s: %w", baseURI, err)
		}
		return nil, nil
	}
	if o.Type.outDir() == "" {
		return nil, fmt.Errorf("dfsio: unknown test type %d", o.Type)
	}

	// Check the data is there for the tests that need it, then prepare as
	// writeTest/readTest/... do: remove the old output (and for a write
	// the old data).
	dataDir := join("io_data")
	if o.Type != Write {
		for i := 0; i < o.NrFiles; i++ {
			p := dataDir + "/" + fileName(i)
			if _, err := fsys.Stat(ctx, p); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("dfsio: %s: %s does not exist (run -write with at least -nrFiles %d first)", o.Type, fs.Qualify(fsys, p), o.NrFiles)
				}
				return nil, fmt.Errorf("dfsio: %w", err)
			}
		}
	}
	if err := createControlFiles(ctx, fsys, join("io_control"), o, logf); err != nil {
		return nil, err
	}
	if o.Type == Write {
		if err := deleteIfExists(ctx, fsys, dataDir); err != nil {
			return nil, err
		}
		if o.StoragePolicy != "" {
			if err := fsys.Mkdirs(ctx, dataDir, 0); err != nil {
				return nil, fmt.Errorf("dfsio: mkdir %s: %w", dataDir, err)
			}
			if err := fsys.(storagePolicySetter).SetStoragePolicy(ctx, dataDir, o.StoragePolicy); err != nil {
				return nil, fmt.Errorf("dfsio: set storage policy %s on %s: %w", o.StoragePolicy, dataDir, err)
			}
		}
	}
	outDir := join(o.Type.outDir())
	if err := deleteIfExists(ctx, fsys, outDir); err != nil {
		return nil, err
	}

	params := jobParams{typ: o.Type, base: baseURI, bufferSize: o.BufferSize, skipSize: o.SkipSize, compression: o.Compression}
	job, err := mapreduce.NewJob(JobName, params.args(), env.Conf)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := mapreduce.Submit(ctx, job, env, logw); err != nil {
		return nil, fmt.Errorf("dfsio: %s test failed: %w", o.Type, err)
	}
	exec := time.Since(start)

	stats, err := readStats(ctx, fsys, outDir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Type: o.Type, Date: time.Now(), Stats: stats, ExecTime: exec}
	text := rep.String()
	if _, err := io.WriteString(out, text); err != nil {
		return rep, err
	}
	f, err := os.OpenFile(o.ResFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return rep, fmt.Errorf("dfsio: results file: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return rep, fmt.Errorf("dfsio: results file: %w", err)
	}
	if err := f.Close(); err != nil {
		return rep, fmt.Errorf("dfsio: results file: %w", err)
	}
	return rep, nil
}

func fileName(i int) string { return "test_io_" + strconv.Itoa(i) }

// createControlFiles writes one KV file per data file, as
// createControlFile does with SequenceFiles of Text → LongWritable.
func createControlFiles(ctx context.Context, fsys fs.FileSystem, dir string, o Options, logf func(string, ...any)) error {
	logf("creating control file: %d bytes, %d files", o.FileSize, o.NrFiles)
	if err := deleteIfExists(ctx, fsys, dir); err != nil {
		return err
	}
	if err := fsys.Mkdirs(ctx, dir, 0); err != nil {
		return fmt.Errorf("dfsio: mkdir %s: %w", dir, err)
	}
	for i := 0; i < o.NrFiles; i++ {
		name := fileName(i)
		p := dir + "/in_file_" + name
		w, err := fsys.Create(ctx, p, fs.CreateOptions{Overwrite: true})
		if err != nil {
			return fmt.Errorf("dfsio: control file: %w", err)
		}
		kw, err := mapreduce.NewKVFileWriter(w)
		if err == nil {
			err = kw.Write([]byte(name), binary.BigEndian.AppendUint64(nil, uint64(o.FileSize)))
		}
		if err == nil {
			err = kw.Flush()
		}
		if err = errors.Join(err, w.Close()); err != nil {
			return fmt.Errorf("dfsio: control file %s: %w", fs.Qualify(fsys, p), err)
		}
	}
	logf("created control files for: %d files", o.NrFiles)
	return nil
}

func deleteIfExists(ctx context.Context, fsys fs.FileSystem, p string) error {
	if err := fsys.Delete(ctx, p, true); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dfsio: delete %s: %w", fs.Qualify(fsys, p), err)
	}
	return nil
}

// readStats reads the reduce output: every part file of dir.
func readStats(ctx context.Context, fsys fs.FileSystem, dir string) (Stats, error) {
	entries, err := fsys.List(ctx, dir)
	if err != nil {
		return Stats{}, fmt.Errorf("dfsio: job output: %w", err)
	}
	var parts []io.Reader
	for _, e := range entries {
		if e.IsDir || !strings.HasPrefix(e.Name(), "part-") {
			continue
		}
		f, err := fsys.Open(ctx, e.Path)
		if err != nil {
			return Stats{}, fmt.Errorf("dfsio: job output: %w", err)
		}
		defer f.Close()
		parts = append(parts, f)
	}
	if len(parts) == 0 {
		return Stats{}, fmt.Errorf("dfsio: job output %s has no part file", fs.Qualify(fsys, dir))
	}
	s, err := ParseStats(io.MultiReader(parts...))
	if err != nil {
		return s, err
	}
	if s.Tasks == 0 {
		return s, fmt.Errorf("dfsio: job output %s has no statistics", fs.Qualify(fsys, dir))
	}
	return s, nil
}

// storagePolicySetter is what -storagePolicy needs of the file system
// (the HDFS client has it).
type storagePolicySetter interface {
	SetStoragePolicy(ctx context.Context, p, policy string) error
	StoragePolicies(ctx context.Context) ([]hdfs.StoragePolicy, error)
}

// checkStoragePolicy is TestDFSIO.checkStoragePolicy: the name must be one
// of the file system's policies.
func checkStoragePolicy(ctx context.Context, fsys fs.FileSystem, name string) error {
	sp, ok := fsys.(storagePolicySetter)
	if !ok {
		return fmt.Errorf("dfsio: -storagePolicy needs an HDFS file system, not %s", fsys.URI())
	}
	pols, err := sp.StoragePolicies(ctx)
	if err != nil {
		return fmt.Errorf("dfsio: get block storage policies: %w", err)
	}
	var names []string
	for _, p := range pols {
		if p.Name == name {
			return nil
		}
		names = append(names, p.Name)
	}
	return fmt.Errorf("dfsio: Invalid block storage policy: %s\nCurrent supported storage policy list: \n%s", name, strings.Join(names, "\n"))
}
