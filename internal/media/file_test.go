package media

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

// cheap is a model whose charges take no noticeable time, so that tests
// count requests rather than wait for them.
var cheap = Params{ReadMBps: 1e6, WriteMBps: 1e6, Latency: time.Microsecond, Seek: time.Microsecond, QueueDepth: 1}

const reqBytes = 1 << 20

// emulate installs a table with dir as a cheap device and returns the
// device's directory; the table is removed when the test ends.
func emulate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := Install(&Table{Devices: []Device{{Dir: dir, Preset: "test", Params: cheap}}, RequestBytes: reqBytes}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Install(nil) })
	return dir
}

func stats(t *testing.T, dir string) Stats {
	t.Helper()
	st, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// since returns the counters' growth from before to now.
func since(t *testing.T, dir string, before Stats) Stats {
	now := stats(t, dir)
	return Stats{
		Requests:   now.Requests - before.Requests,
		Seeks:      now.Seeks - before.Seeks,
		ReadBytes:  now.ReadBytes - before.ReadBytes,
		WriteBytes: now.WriteBytes - before.WriteBytes,
	}
}

func TestOffIsOSFile(t *testing.T) {
	Install(nil)
	dir := t.TempDir()
	f, err := OpenFile(filepath.Join(dir, "x"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(*os.File); !ok {
		t.Errorf("with emulation off OpenFile gave %T, want *os.File", f)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0); !os.IsNotExist(err) {
		t.Errorf("opening a missing file: %v, want not-exist", err)
	}
	if err := Charge(filepath.Join(dir, "x"), 0, 1<<30, false); err != nil {
		t.Errorf("Charge with emulation off: %v", err)
	}
}

func TestOutsideDeviceIsOSFile(t *testing.T) {
	emulate(t)
	f, err := Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(*os.File); !ok {
		t.Errorf("outside emulated directories OpenFile gave %T, want *os.File", f)
	}
}

func TestSequentialWriteAndReadAreExtents(t *testing.T) {
	dir := emulate(t)
	path := filepath.Join(dir, "sub", "data")
	os.MkdirAll(filepath.Dir(path), 0o755)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4*reqBytes/16+100) // 4 MiB + 1600 bytes
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*os.File); ok {
		t.Fatal("a file under an emulated directory is a plain *os.File")
	}
	for off := 0; off < len(data); off += 64 << 10 {
		if _, err := f.Write(data[off:min(off+64<<10, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w := stats(t, dir)
	// 4 full extents while writing, the 1600-byte tail on Close; one
	// seek (the device's first request).
	if w.Requests != 5 || w.Seeks != 1 || w.WriteBytes != uint64(len(data)) {
		t.Errorf("writing 4 MiB in 64 KiB writes: %+v, want 5 requests, 1 seek, %d bytes", w, len(data))
	}

	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	_, err = io.CopyBuffer(struct{ io.Writer }{&got}, f, make([]byte, 64<<10)) // must not bypass the device (no WriterTo)
	f.Close()
	if err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", got.Len(), err, len(data))
	}
	r := since(t, dir, w)
	// Readahead: 4 extents of 1 MiB and the tail; one seek back to 0.
	if r.Requests != 5 || r.Seeks != 1 || r.ReadBytes != uint64(len(data)) {
		t.Errorf("reading 4 MiB sequentially: %+v, want 5 requests, 1 seek, %d bytes", r, len(data))
	}

	// Random 4 KiB reads are charged exactly, each a seek.
	f, _ = Open(path)
	before := stats(t, dir)
	b := make([]byte, 4096)
	for _, off := range []int64{3 << 20, 1 << 20, 2 << 20, 12288} {
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if r := since(t, dir, before); r.Requests != 4 || r.Seeks != 4 || r.ReadBytes != 4*4096 {
		t.Errorf("4 random reads: %+v, want 4 requests, 4 seeks, 16384 bytes", r)
	}
}

func TestInterleavedWritersSeek(t *testing.T) {
	dir := emulate(t)
	a, _ := Create(filepath.Join(dir, "a"))
	b, _ := Create(filepath.Join(dir, "b"))
	chunk := make([]byte, reqBytes)
	for range 3 {
		a.Write(chunk)
		b.Write(chunk)
	}
	a.Close()
	b.Close()
	if st := stats(t, dir); st.Requests != 6 || st.Seeks != 6 {
		t.Errorf("two files written in alternating 1 MiB pieces: %+v, want 6 requests, all seeks", st)
	}
}

func TestWriteFileAndCopyCharge(t *testing.T) {
	dir := emulate(t)
	if err := WriteFile(filepath.Join(dir, "idx"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := Create(filepath.Join(dir, "copy"))
	n, err := io.Copy(f, io.LimitReader(zeros{}, 3*reqBytes)) // no ReadFrom bypass
	f.Close()
	if err != nil || n != 3*reqBytes {
		t.Fatal(n, err)
	}
	if st := stats(t, dir); st.WriteBytes != 100+3*reqBytes {
		t.Errorf("device wrote %d bytes, want %d", st.WriteBytes, 100+3*reqBytes)
	}
	before := stats(t, dir)
	if err := Charge(filepath.Join(dir, "copy"), reqBytes, 2*reqBytes+1, false); err != nil {
		t.Fatal(err)
	}
	if r := since(t, dir, before); r.Requests != 3 || r.ReadBytes != 2*reqBytes+1 {
		t.Errorf("Charge of 2 MiB + 1: %+v, want 3 requests", r)
	}
	if err := Charge(filepath.Join(dir, "missing"), 0, 1, false); !os.IsNotExist(err) {
		t.Errorf("Charge of a missing file: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestCorruptStateFileIsReset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StateFile), bytes.Repeat([]byte{0xff}, stateSize), 0o644)
	if err := Install(&Table{Devices: []Device{{Dir: dir, Preset: "test", Params: cheap}}, RequestBytes: reqBytes}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Install(nil) })
	WriteFile(filepath.Join(dir, "x"), make([]byte, 10), 0o644)
	if st := stats(t, dir); st.Requests != 1 || st.WriteBytes != 10 {
		t.Errorf("after a corrupt state file: %+v, want a fresh count of 1 request", st)
	}
}

func TestConfigureExportsTable(t *testing.T) {
	dir := t.TempDir()
	c := conf.New()
	c.Set(KeyDirs, dir+"=sata-ssd")
	if err := Configure(c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Install(nil) })
	if os.Getenv(EnvVar) == "" {
		t.Fatalf("Configure left $%s empty", EnvVar)
	}
	if d, ok := Lookup(filepath.Join(dir, "a", "b")); !ok || d.Preset != "sata-ssd" || d.Params.ReadMBps != 550 {
		t.Errorf("Lookup under %s: %+v %v", dir, d, ok)
	}
	if _, ok := Lookup(dir + "x/y"); ok {
		t.Errorf("%sx/y counted as under %s", dir, dir)
	}
	if err := Configure(conf.New()); err != nil {
		t.Fatal(err)
	}
	if Enabled() || os.Getenv(EnvVar) != "" {
		t.Errorf("an empty %s left emulation on (enabled %v, $%s=%q)", KeyDirs, Enabled(), EnvVar, os.Getenv(EnvVar))
	}
}

// TestChildProcessSharesDevice runs this test binary again as a child
// that only inherits the environment: it must find the table in
// $STRATA_MEDIA and charge the same device, whose counters the parent
// then sees.
func TestChildProcessSharesDevice(t *testing.T) {
	if path := os.Getenv("MEDIA_TEST_CHILD_WRITE"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("MEDIA_TEST_CHILD_BYTES"))
		if err := WriteFile(path, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := emulate(t)
	WriteFile(filepath.Join(dir, "parent"), make([]byte, reqBytes), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcessSharesDevice$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEDIA_TEST_CHILD_WRITE="+filepath.Join(dir, "child"), "MEDIA_TEST_CHILD_BYTES="+strconv.Itoa(3*reqBytes))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	st := stats(t, dir)
	if st.WriteBytes != 4*reqBytes || st.Requests != 4 {
		t.Errorf("device counters after parent (1 MiB) and child (3 MiB): %+v, want 4 requests of 4 MiB", st)
	}
	// The child's first request followed the parent's, in another file.
	if st.Seeks != 2 {
		t.Errorf("seeks %d, want 2 (the parent's first request and the child's)", st.Seeks)
	}
}

// stateWithLock writes a valid state file in a new directory whose lock
// word holds holder, as a process killed while holding it would leave it.
func stateWithLock(t *testing.T, holder uint32) string {
	t.Helper()
	dir := t.TempDir()
	page := make([]byte, stateSize)
	st := devState{slots: make([]int64, cheap.QueueDepth)}
	st.encode(page)
	binary.LittleEndian.PutUint32(page[offLock:], holder)
	if err := os.WriteFile(filepath.Join(dir, StateFile), page, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bookOrFail books one request on a device of dir, failing the test
// rather than hanging when the device lock is never taken.
func bookOrFail(t *testing.T, dir string) {
	t.Helper()
	d := newDevice(Device{Dir: dir, Preset: "test", Params: cheap}, reqBytes)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.book(0, 1, 0, 10, true)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("a lock word left in %s is never taken over", dir)
	}
	if h := atomic.LoadUint32(d.lock); h != 0 {
		t.Errorf("lock word %d after the request, want 0", h)
	}
	if st := stats(t, dir); st.Requests != 1 {
		t.Errorf("after taking the lock: %+v, want 1 request", st)
	}
}

// A lock word holding this process's pid was left by an earlier process
// with the same pid (a daemon restarted after a crash, or a reboot).
func TestStaleLockWithOwnPIDIsTaken(t *testing.T) {
	bookOrFail(t, stateWithLock(t, pid))
}

// A lock word naming a live process that never releases it (a reused pid,
// or garbage) is taken after lockTimeout.
func TestLockOfLiveStrangerIsTakenAtLast(t *testing.T) {
	holder := uint32(os.Getppid())
	if !processAlive(int(holder)) || holder == pid {
		t.Skip("no live parent process")
	}
	bookOrFail(t, stateWithLock(t, holder))
}
