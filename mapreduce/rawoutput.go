package mapreduce

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// RawOutputFormat writes each record's key and value bytes back to back,
// with no framing: the output of fixed-length record jobs (TeraGen's
// 100-byte rows, sky catalogue records), which FixedLengthInputFormat
// reads back. Replication, if above 0, is the files' replication.
type RawOutputFormat struct{ Replication int }

// Check refuses an output directory that exists.
func (RawOutputFormat) Check(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error {
	return CheckOutputDir(ctx, env, c, dir)
}

// Writer creates the attempt's file name in its work directory.
func (o RawOutputFormat) Writer(ctx context.Context, att *TaskAttempt, name string) (RecordWriter, error) {
	fsys, p, err := fs.Resolve(ctx, WorkPath(att, name), att.Env)
	if err != nil {
		return nil, err
	}
	w, err := fsys.Create(ctx, p, fs.CreateOptions{CreateParent: true, Overwrite: true, Replication: o.Replication})
	if err != nil {
		fsys.Close()
		return nil, err
	}
	return &rawWriter{fsys: fsys, w: w, bw: bufio.NewWriterSize(w, 1<<20)}, nil
}

type rawWriter struct {
	fsys fs.FileSystem
	w    io.WriteCloser
	bw   *bufio.Writer
}

func (r *rawWriter) Write(k, v []byte) error {
	if _, err := r.bw.Write(k); err != nil {
		return err
	}
	_, err := r.bw.Write(v)
	return err
}

func (r *rawWriter) Close() error {
	return errors.Join(r.bw.Flush(), r.w.Close(), r.fsys.Close())
}
