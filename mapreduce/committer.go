package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// Configuration keys of the output committer.
const (
	// KeyAppAttemptID numbers the attempt of the whole job (Hadoop's
	// application master attempt), naming <out>/_temporary/<n>; default 0.
	KeyAppAttemptID = "mapreduce.job.application.attempt.id"
	// KeyMarkSuccessfulJobs makes CommitJob write <out>/_SUCCESS
	// (default true).
	KeyMarkSuccessfulJobs = "mapreduce.fileoutputcommitter.marksuccessfuljobs"
)

// Names inside an output directory, Hadoop's.
const (
	// TemporaryDirName holds uncommitted task output.
	TemporaryDirName = "_temporary"
	// SuccessFileName is the empty file marking a committed job.
	SuccessFileName = "_SUCCESS"
)

// OutputExistsError is the error of CheckOutputDir for an output
// directory that already exists (Hadoop's FileAlreadyExistsException). It
// wraps os.ErrExist.
type OutputExistsError struct {
	// URI is the output directory's full URI.
	URI string
}

func (e *OutputExistsError) Error() string {
	return "mapreduce: Output directory " + e.URI + " already exists"
}

func (e *OutputExistsError) Unwrap() error { return os.ErrExist }

// CheckOutputDir is the Check of the file output formats (Hadoop's
// FileOutputFormat.checkOutputSpecs): dir must be set and must not exist
// (*OutputExistsError).
func CheckOutputDir(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error {
	if strings.TrimSpace(dir) == "" {
		return errors.New("mapreduce: output directory not set")
	}
	if env.Conf == nil {
		env.Conf = c
	}
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		return fmt.Errorf("mapreduce: output directory %s: %w", dir, err)
	}
	defer fsys.Close()
	_, err = fsys.Stat(ctx, p)
	switch {
	case err == nil:
		return &OutputExistsError{URI: fs.Qualify(fsys, p)}
	case missing(err):
		return nil
	}
	return fmt.Errorf("mapreduce: output directory %s: %w", fs.Qualify(fsys, p), err)
}

// PartName is the output file name of a task: part-m-00003 for map task 3
// of a map-only job, part-r-00003 for reduce task 3 (typ is 'm' or 'r').
func PartName(typ byte, task int) string {
	return fmt.Sprintf("part-%c-%05d", typ, task)
}

// appAttempt reads mapreduce.job.application.attempt.id.
func appAttempt(c *conf.Configuration) (int, error) {
	n, err := confInt(c, KeyAppAttemptID, 0)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("mapreduce: %s=%d is out of range", KeyAppAttemptID, n)
	}
	return int(n), nil
}

// joinOut appends slash-separated elements to an output directory given
// as a path or a URI.
func joinOut(dir string, elems ...string) string {
	return strings.TrimRight(dir, "/") + "/" + strings.Join(elems, "/")
}

// WorkDir is the directory where att writes its output before it commits:
// <OutputDir>/_temporary/<app attempt>/_temporary/<attempt id>, Hadoop's
// layout. It is written the way att.OutputDir is (a path or a URI). The app
// attempt is read from att.Conf (mapreduce.job.application.attempt.id,
// default 0; an invalid value counts as 0, and the Committer reports it).
func WorkDir(att *TaskAttempt) string {
	app, _ := appAttempt(att.Conf)
	return joinOut(att.OutputDir, TemporaryDirName, strconv.Itoa(app), TemporaryDirName, att.ID())
}

// WorkPath is where att writes the output file name (part-r-00003):
// WorkDir(att)/name. Output formats create their files there; the
// Committer moves them to the output directory when the task commits.
func WorkPath(att *TaskAttempt, name string) string {
	return WorkDir(att) + "/" + name
}

// createWorkFile creates WorkPath(att, name); closing the returned writer
// closes the file system it was opened on too.
func createWorkFile(ctx context.Context, att *TaskAttempt, name string) (io.WriteCloser, error) {
	env := att.Env
	if env.Conf == nil {
		env.Conf = att.Conf
	}
	wp := WorkPath(att, name)
	fsys, p, err := fs.Resolve(ctx, wp, env)
	if err != nil {
		return nil, fmt.Errorf("mapreduce: create %s: %w", wp, err)
	}
	w, err := fsys.Create(ctx, p, fs.CreateOptions{CreateParent: true})
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("mapreduce: create %s: %w", fs.Qualify(fsys, p), err)
	}
	return &fsWriter{WriteCloser: w, fsys: fsys}, nil
}

// fsWriter closes its file system after the file.
type fsWriter struct {
	io.WriteCloser
	fsys fs.FileSystem
}

func (w *fsWriter) Close() error {
	return errors.Join(w.WriteCloser.Close(), w.fsys.Close())
}

// Committer is Hadoop's FileOutputCommitter with algorithm version 2: a
// task attempt writes under its work directory (WorkDir); committing the
// task moves its files straight into the output directory, replacing files
// of the same name (so a re-run task that commits again does not leave
// duplicates); committing the job removes <out>/_temporary and writes
// <out>/_SUCCESS.
//
// As with Hadoop's v2 algorithm, the output of committed tasks is visible
// in the output directory before the job commits, and stays there if the
// job aborts; only _SUCCESS tells that the job completed. The caller must
// not commit two attempts of the same task at the same time (Hadoop's
// canCommit arbitration): commits of different tasks may run concurrently.
//
// A Committer holds no open resources: every call opens the output's file
// system and closes it before returning.
type Committer struct {
	env         fs.Env
	dir         string // the output directory as given
	app         int
	markSuccess bool
}

// NewCommitter returns the committer of the output directory outDir (a
// path or URI, resolved with env), reading mapreduce.job.application.attempt.id
// and mapreduce.fileoutputcommitter.marksuccessfuljobs from c.
func NewCommitter(env fs.Env, c *conf.Configuration, outDir string) (*Committer, error) {
	if strings.TrimSpace(outDir) == "" {
		return nil, errors.New("mapreduce: output directory not set")
	}
	if c == nil {
		c = env.Conf
	}
	if env.Conf == nil {
		env.Conf = c
	}
	app, err := appAttempt(c)
	if err != nil {
		return nil, err
	}
	mark, err := confBool(c, KeyMarkSuccessfulJobs, true)
	if err != nil {
		return nil, err
	}
	return &Committer{env: env, dir: outDir, app: app, markSuccess: mark}, nil
}

// open resolves the output directory.
func (cm *Committer) open(ctx context.Context) (fs.FileSystem, string, error) {
	fsys, p, err := fs.Resolve(ctx, cm.dir, cm.env)
	if err != nil {
		return nil, "", fmt.Errorf("mapreduce: output directory %s: %w", cm.dir, err)
	}
	return fsys, p, nil
}

func (cm *Committer) jobTemp(out string) string {
	return path.Join(out, TemporaryDirName, strconv.Itoa(cm.app))
}

func (cm *Committer) attemptDir(out string, att *TaskAttempt) string {
	return path.Join(cm.jobTemp(out), TemporaryDirName, att.ID())
}

// SetupJob creates the output directory and <out>/_temporary/<app>.
func (cm *Committer) SetupJob(ctx context.Context) error {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return err
	}
	defer fsys.Close()
	if err := fsys.Mkdirs(ctx, cm.jobTemp(out), 0); err != nil {
		return fmt.Errorf("mapreduce: setup job output %s: %w", fs.Qualify(fsys, out), err)
	}
	return nil
}

// SetupTask creates att's work directory and returns it as a full URI.
// (Output formats do not depend on it: they create WorkPath's parents.)
func (cm *Committer) SetupTask(ctx context.Context, att *TaskAttempt) (string, error) {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return "", err
	}
	defer fsys.Close()
	dir := cm.attemptDir(out, att)
	if err := fsys.Mkdirs(ctx, dir, 0); err != nil {
		return "", fmt.Errorf("mapreduce: setup task %s: %w", att.ID(), err)
	}
	return fs.Qualify(fsys, dir), nil
}

// CommitTask moves every file of att's work directory into the output
// directory (subdirectories are merged), replacing what is there under the
// same name, then removes the work directory. An attempt that wrote
// nothing commits nothing. Calling it again after it succeeded does
// nothing.
func (cm *Committer) CommitTask(ctx context.Context, att *TaskAttempt) error {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return err
	}
	defer fsys.Close()
	dir := cm.attemptDir(out, att)
	st, err := fsys.Stat(ctx, dir)
	if missing(err) {
		return nil
	}
	if err == nil && !st.IsDir {
		err = fmt.Errorf("%s is not a directory: %w", fs.Qualify(fsys, dir), fs.ErrNotDir)
	}
	if err == nil {
		err = mergeInto(ctx, fsys, dir, out)
	}
	if err == nil {
		err = fsys.Delete(ctx, dir, true)
		if missing(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("mapreduce: commit task %s: %w", att.ID(), err)
	}
	return nil
}

// mergeInto moves the children of the directory from into the directory
// to, as Hadoop's FileOutputCommitter.mergePaths: a file replaces what is
// at its destination; a directory is merged into a directory of the same
// name, replaces a file, or is moved whole.
func mergeInto(ctx context.Context, fsys fs.FileSystem, from, to string) error {
	sts, err := fsys.List(ctx, from)
	if err != nil {
		return err
	}
	for _, st := range sts {
		dst := path.Join(to, st.Name())
		dstSt, err := fsys.Stat(ctx, dst)
		switch {
		case err == nil && st.IsDir && dstSt.IsDir:
			if err := mergeInto(ctx, fsys, st.Path, dst); err != nil {
				return err
			}
			continue
		case err == nil:
			if err := fsys.Delete(ctx, dst, true); err != nil && !missing(err) {
				return err
			}
		case !missing(err):
			return err
		}
		if err := fsys.Rename(ctx, st.Path, dst); err != nil {
			return err
		}
	}
	return nil
}

// AbortTask deletes att's work directory. A missing one is not an error.
func (cm *Committer) AbortTask(ctx context.Context, att *TaskAttempt) error {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return err
	}
	defer fsys.Close()
	if err := fsys.Delete(ctx, cm.attemptDir(out, att), true); err != nil && !missing(err) {
		return fmt.Errorf("mapreduce: abort task %s: %w", att.ID(), err)
	}
	return nil
}

// CommitJob deletes <out>/_temporary and, unless
// mapreduce.fileoutputcommitter.marksuccessfuljobs is false, writes an
// empty <out>/_SUCCESS.
func (cm *Committer) CommitJob(ctx context.Context) error {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return err
	}
	defer fsys.Close()
	if err := fsys.Delete(ctx, path.Join(out, TemporaryDirName), true); err != nil && !missing(err) {
		return fmt.Errorf("mapreduce: commit job %s: %w", fs.Qualify(fsys, out), err)
	}
	if !cm.markSuccess {
		return nil
	}
	w, err := fsys.Create(ctx, path.Join(out, SuccessFileName), fs.CreateOptions{Overwrite: true, CreateParent: true})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return fmt.Errorf("mapreduce: commit job %s: %w", fs.Qualify(fsys, out), err)
	}
	return nil
}

// AbortJob deletes <out>/_temporary. Output of tasks that committed stays
// (algorithm v2); there is no _SUCCESS.
func (cm *Committer) AbortJob(ctx context.Context) error {
	fsys, out, err := cm.open(ctx)
	if err != nil {
		return err
	}
	defer fsys.Close()
	if err := fsys.Delete(ctx, path.Join(out, TemporaryDirName), true); err != nil && !missing(err) {
		return fmt.Errorf("mapreduce: abort job %s: %w", fs.Qualify(fsys, out), err)
	}
	return nil
}
