package fsdataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

// expectedMeta computes a meta file independently of the package: header,
// then crc32 Castagnoli of each chunk.
func expectedMeta(data []byte, bpc int) []byte {
	tab := crc32.MakeTable(crc32.Castagnoli)
	out := []byte{0, 1, 2, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[3:], uint32(bpc))
	for off := 0; off < len(data); off += bpc {
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(data[off:min(off+bpc, len(data))], tab))
	}
	return out
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// logBuf collects log output for assertions.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testLogger logs to the test (with -v) and to the returned buffer.
func testLogger(t testing.TB) (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	h := slog.NewTextHandler(io.MultiWriter(lb, tWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(h), lb
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// eventLog records OnChange events.
type eventLog struct {
	mu     sync.Mutex
	events []ReplicaEvent
}

func (e *eventLog) add(ev ReplicaEvent) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

func (e *eventLog) take() []ReplicaEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.events
	e.events = nil
	return out
}

type env struct {
	t      testing.TB
	cfg    Config
	ds     *Dataset
	log    *logBuf
	events *eventLog
}

// newEnv opens a dataset over n fresh DISK volumes (types override).
func newEnv(t testing.TB, n int, tweak func(*Config)) *env {
	t.Helper()
	root := t.TempDir()
	var vols []VolumeConfig
	for i := range n {
		vols = append(vols, VolumeConfig{Path: filepath.Join(root, "vol"+string(rune('a'+i))), Type: storage.Disk})
	}
	e := &env{t: t, events: &eventLog{}}
	e.cfg = DefaultConfig(vols)
	e.cfg.Logger, e.log = testLogger(t)
	e.cfg.OnChange = e.events.add
	if tweak != nil {
		tweak(&e.cfg)
	}
	e.open()
	t.Cleanup(func() { e.ds.Close() })
	return e
}

func (e *env) open() {
	e.t.Helper()
	ds, err := Open(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.ds = ds
}

func (e *env) reopen() {
	e.t.Helper()
	if err := e.ds.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
}

// write creates a replica with data written in one piece, finalized.
func (e *env) write(id, gs uint64, data []byte) ReplicaInfo {
	e.t.Helper()
	w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: gs}, storage.Disk, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		e.t.Fatal(err)
	}
	info, err := w.Finalize()
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// files returns the data and meta file contents of a replica.
func (e *env) files(id uint64) (data, meta []byte) {
	e.t.Helper()
	r := e.replica(id)
	data, err := os.ReadFile(r.dataPath())
	if err != nil {
		e.t.Fatal(err)
	}
	meta, err = os.ReadFile(r.metaPath())
	if err != nil {
		e.t.Fatal(err)
	}
	return data, meta
}

func (e *env) replica(id uint64) *replica {
	e.t.Helper()
	e.ds.mu.Lock()
	defer e.ds.mu.Unlock()
	r := e.ds.replicas[id]
	if r == nil {
		e.t.Fatalf("no replica %d", id)
	}
	return r
}

// checkReplica verifies the files and a read of a replica against data.
func (e *env) checkReplica(id uint64, data []byte) {
	e.t.Helper()
	gotData, gotMeta := e.files(id)
	if !bytes.Equal(gotData, data) {
		e.t.Fatalf("blk_%d: data file differs (len %d, want %d)", id, len(gotData), len(data))
	}
	want := expectedMeta(data, DefaultBytesPerChecksum)
	if !bytes.Equal(gotMeta, want) {
		e.t.Fatalf("blk_%d: meta file differs:\n got %x\nwant %x", id, head(gotMeta), head(want))
	}
	info, _ := e.ds.Get(id)
	e.checkRead(info.Block, data)
	if err := e.ds.Verify(info.Block); err != nil {
		e.t.Fatal(err)
	}
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }

// checkRead reads the replica through a ReplicaReader and checks data and
// checksums.
func (e *env) checkRead(b Block, data []byte) {
	e.t.Helper()
	rr, err := e.ds.OpenForRead(b)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rr.Close()
	if rr.Length() != int64(len(data)) {
		e.t.Fatalf("%v: Length %d, want %d", b, rr.Length(), len(data))
	}
	got := make([]byte, len(data)+10)
	n, err := rr.ReadAt(got, 0)
	if n != len(data) || (err != io.EOF && !(err == nil && len(got) == len(data))) {
		e.t.Fatalf("%v: ReadAt = %d, %v; want %d, EOF", b, n, err, len(data))
	}
	if !bytes.Equal(got[:n], data) {
		e.t.Fatalf("%v: read data differs", b)
	}
	nc := (len(data) + rr.BytesPerChecksum() - 1) / rr.BytesPerChecksum()
	sums, err := rr.Checksums(0, nc)
	if err != nil {
		e.t.Fatal(err)
	}
	if want := expectedMeta(data, rr.BytesPerChecksum())[metaHeaderLen:]; !bytes.Equal(sums, want) {
		e.t.Fatalf("%v: Checksums differ", b)
	}
	if _, err := rr.Checksums(0, nc+1); err == nil {
		e.t.Fatalf("%v: Checksums past the end accepted", b)
	}
}

// faultFS wraps OSFS to inject faults.
type faultFS struct {
	OSFS
	mu          sync.Mutex
	dead        []string // path prefixes whose every operation fails with EIO
	failAt      int      // if > 0, the failAt-th mutating operation (write, sync, truncate, rename, remove, mkdir) fails with EIO
	ops         int      // mutating operations so far
	noDirect    bool     // O_DIRECT opens fail with EINVAL
	directWrite bool     // O_DIRECT writes fail with EINVAL
	statfs      map[string]DiskUsage
}

func (f *faultFS) kill(prefix string) {
	f.mu.Lock()
	f.dead = append(f.dead, prefix)
	f.mu.Unlock()
}

func (f *faultFS) check(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.dead {
		if path == p || strings.HasPrefix(path, p+string(filepath.Separator)) {
			return &os.PathError{Op: op, Path: path, Err: syscall.EIO}
		}
	}
	return nil
}

// mutate counts a mutating operation and fails the failAt-th.
func (f *faultFS) mutate(op, path string) error {
	if err := f.check(op, path); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops++
	if f.failAt > 0 && f.ops == f.failAt {
		return &os.PathError{Op: op, Path: path, Err: syscall.EIO}
	}
	return nil
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	direct := O_DIRECT != 0 && flag&O_DIRECT != 0
	f.mu.Lock()
	refuse := f.noDirect
	f.mu.Unlock()
	if direct && refuse {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
	}
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, path: name, direct: direct}, nil
}

func (f *faultFS) Rename(o, n string) error {
	if err := f.check("rename", n); err != nil {
		return err
	}
	if err := f.mutate("rename", o); err != nil {
		return err
	}
	return f.OSFS.Rename(o, n)
}

func (f *faultFS) Remove(name string) error {
	if err := f.mutate("remove", name); err != nil {
		return err
	}
	return f.OSFS.Remove(name)
}

func (f *faultFS) MkdirAll(p string, perm os.FileMode) error {
	if err := f.mutate("mkdir", p); err != nil {
		return err
	}
	return f.OSFS.MkdirAll(p, perm)
}

func (f *faultFS) Stat(name string) (os.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	return f.OSFS.Stat(name)
}

func (f *faultFS) ReadDir(name string) ([]os.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	return f.OSFS.ReadDir(name)
}

func (f *faultFS) Statfs(p string) (DiskUsage, error) {
	if err := f.check("statfs", p); err != nil {
		return DiskUsage{}, err
	}
	f.mu.Lock()
	du, ok := f.statfs[p]
	f.mu.Unlock()
	if ok {
		return du, nil
	}
	return f.OSFS.Statfs(p)
}

func (f *faultFS) Lock(p string) (io.Closer, error) {
	if err := f.check("lock", p); err != nil {
		return nil, err
	}
	return f.OSFS.Lock(p)
}

type faultFile struct {
	File
	fs     *faultFS
	path   string
	direct bool
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.mutate("write", f.path); err != nil {
		return 0, err
	}
	f.fs.mu.Lock()
	einval := f.direct && f.fs.directWrite
	f.fs.mu.Unlock()
	if einval {
		return 0, &os.PathError{Op: "write", Path: f.path, Err: syscall.EINVAL}
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check("read", f.path); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) Sync() error {
	if err := f.fs.mutate("sync", f.path); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(n int64) error {
	if err := f.fs.mutate("truncate", f.path); err != nil {
		return err
	}
	return f.File.Truncate(n)
}

func (f *faultFile) Stat() (os.FileInfo, error) {
	if err := f.fs.check("stat", f.path); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func mustErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}
