package fusefs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/testcluster"
)

// mounted is a test cluster mounted with FUSE.
type mounted struct {
	c   *testcluster.Cluster
	dir string
	srv *fusefs.Server
	hc  *hdfs.Client // the superuser, straight to the NameNode
}

func mount(t *testing.T, o fusefs.Options) *mounted {
	t.Helper()
	gwtest.NeedFUSE(t)
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	factory := gwtest.ClientFactory(c, hdfs.Options{Replication: 1, BlockSize: 1 << 20})
	// Other uids must be able to reach the mount.
	o.User, o.AllowOther = c.Superuser(), true
	dir, srv := gwtest.MountFUSE(t, factory, o)
	return &mounted{c: c, dir: dir, srv: srv, hc: c.Client(c.Superuser())}
}

func (m *mounted) p(name string) string { return filepath.Join(m.dir, name) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// hdfsRead reads p straight from HDFS.
func (m *mounted) hdfsRead(t *testing.T, p string) []byte {
	t.Helper()
	r, err := m.hc.OpenFile(ctxT(t), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (m *mounted) hdfsWrite(t *testing.T, p string, data []byte) {
	t.Helper()
	w, err := m.hc.CreateFile(ctxT(t), p, fs.CreateOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func TestMountEndToEnd(t *testing.T) {
	m := mount(t, fusefs.Options{})
	ctx := ctxT(t)

	t.Run("mkdir, ls, stat", func(t *testing.T) {
		if err := os.MkdirAll(m.p("a/b/c"), 0o755); err != nil {
			t.Fatal(err)
		}
		st, err := m.hc.Stat(ctx, "/a/b/c")
		if err != nil || !st.IsDir {
			t.Fatalf("HDFS stat of a directory made through the mount: %+v, %v", st, err)
		}
		if err := m.hc.Mkdirs(ctx, "/a/b/other", 0o700); err != nil {
			t.Fatal(err)
		}
		m.hdfsWrite(t, "/a/b/file", []byte("hello"))
		ents, err := os.ReadDir(m.p("a/b"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.IsDir()))
		}
		if got := strings.Join(names, " "); got != "c:true file:false other:true" {
			t.Errorf("ls a/b = %q", got)
		}
		fi, err := os.Stat(m.p("a/b/file"))
		if err != nil {
			t.Fatal(err)
		}
		hst, _ := m.hc.Stat(ctx, "/a/b/file")
		if fi.Size() != 5 || fi.Mode().Perm() != os.FileMode(hst.Perm) || fi.Sys().(*syscall.Stat_t).Ino != hst.FileID {
			t.Errorf("stat a/b/file: size %d mode %v ino %d; HDFS has perm %o id %d", fi.Size(), fi.Mode(), fi.Sys().(*syscall.Stat_t).Ino, hst.Perm, hst.FileID)
		}
		if fi, err := os.Stat(m.p("a/b/other")); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
			t.Errorf("stat a/b/other: %v %v", fi, err)
		}
		if _, err := os.Stat(m.p("a/missing")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat of a missing file: %v", err)
		}
	})

	data := randomBytes(5<<20+12345, 1) // several 1 MiB blocks and a partial one
	t.Run("cp in and read back", func(t *testing.T) {
		local := filepath.Join(t.TempDir(), "big")
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", local, m.p("a/big")).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
		if got := m.hdfsRead(t, "/a/big"); !bytes.Equal(got, data) {
			t.Fatalf("HDFS has %d bytes, want the %d copied in", len(got), len(data))
		}
		got, err := os.ReadFile(m.p("a/big"))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back through the mount: %d bytes, %v", len(got), err)
		}
		// A read in the middle, away from the stream.
		f, err := os.Open(m.p("a/big"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 1000)
		if _, err := f.ReadAt(buf, 3<<20+7); err != nil || !bytes.Equal(buf, data[3<<20+7:3<<20+1007]) {
			t.Errorf("pread at 3 MiB: %v", err)
		}
	})

	t.Run("append", func(t *testing.T) {
		f, err := os.OpenFile(m.p("a/big"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("tail one")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		// A write at the end of a file opened without O_APPEND appends too.
		f, err = os.OpenFile(m.p("a/big"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("+two"), int64(len(data))+8); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		// close(2) of one descriptor closes the HDFS file; a write through
		// a duplicate reopens it at its end.
		f, err = os.OpenFile(m.p("a/big"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fd2, err := syscall.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("+3"))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := syscall.Write(fd2, []byte("+4")); err != nil {
			t.Fatalf("write through a duplicate after close: %v", err)
		}
		if err := syscall.Close(fd2); err != nil {
			t.Fatal(err)
		}
		want := append(append([]byte{}, data...), "tail one+two+3+4"...)
		if got := m.hdfsRead(t, "/a/big"); !bytes.Equal(got, want) {
			t.Fatalf("after appends HDFS has %d bytes, want %d", len(got), len(want))
		}
		if fi, err := os.Stat(m.p("a/big")); err != nil || fi.Size() != int64(len(want)) {
			t.Errorf("stat after append: %v %v", fi, err)
		}
	})

	t.Run("random write is refused", func(t *testing.T) {
		orig := randomBytes(1<<20, 2)
		m.hdfsWrite(t, "/a/mb", orig)
		for _, flag := range []int{os.O_WRONLY, os.O_RDWR} {
			f, err := os.OpenFile(m.p("a/mb"), flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt([]byte("XXXX"), 10)
			if !errors.Is(err, syscall.ENOTSUP) {
				t.Errorf("pwrite at offset 10 (flags %#x): %v, want ENOTSUP", flag, err)
			}
			if err := f.Close(); err != nil {
				t.Errorf("close after a refused write: %v", err)
			}
		}
		// Also after a sequential start: the file keeps what was written.
		f, err := os.Create(m.p("a/seq"))
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("0123456789"))
		if _, err := f.WriteAt([]byte("x"), 3); !errors.Is(err, syscall.ENOTSUP) {
			t.Errorf("overwrite inside a new file: %v, want ENOTSUP", err)
		}
		f.Close()
		if got := m.hdfsRead(t, "/a/mb"); !bytes.Equal(got, orig) {
			t.Error("the file changed after refused writes")
		}
		if got := m.hdfsRead(t, "/a/seq"); string(got) != "0123456789" {
			t.Errorf("a/seq = %q", got)
		}
		// Growing by truncate is refused; shrinking works.
		if err := os.Truncate(m.p("a/mb"), 2<<20); !errors.Is(err, syscall.ENOTSUP) {
			t.Errorf("truncate up: %v, want ENOTSUP", err)
		}
		if err := os.Truncate(m.p("a/mb"), 1000); err != nil {
			t.Fatal(err)
		}
		if got := m.hdfsRead(t, "/a/mb"); !bytes.Equal(got, orig[:1000]) {
			t.Errorf("after truncate to 1000 HDFS has %d bytes", len(got))
		}
		// O_TRUNC empties the file and writes it anew (cp over a file).
		if err := os.WriteFile(m.p("a/mb"), []byte("new content"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := m.hdfsRead(t, "/a/mb"); string(got) != "new content" {
			t.Errorf("after O_TRUNC rewrite: %q", got)
		}
	})

	t.Run("rename, rm, rmdir", func(t *testing.T) {
		if err := os.Rename(m.p("a/seq"), m.p("a/b/c/moved")); err != nil {
			t.Fatal(err)
		}
		if _, err := m.hc.Stat(ctx, "/a/seq"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("old name after rename: %v", err)
		}
		if got := m.hdfsRead(t, "/a/b/c/moved"); string(got) != "0123456789" {
			t.Errorf("renamed file has %q", got)
		}
		// rename(2) replaces an existing file.
		if err := os.Rename(m.p("a/b/c/moved"), m.p("a/mb")); err != nil {
			t.Fatal(err)
		}
		if got := m.hdfsRead(t, "/a/mb"); string(got) != "0123456789" {
			t.Errorf("replaced file has %q", got)
		}
		if err := os.Rename(m.p("a/b/c"), m.p("a/c2")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(m.p("a/b")); !errors.Is(err, syscall.ENOTEMPTY) {
			t.Errorf("rmdir of a non-empty directory: %v, want ENOTEMPTY", err)
		}
		if err := os.Remove(m.p("a/mb")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(m.p("a/c2")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/a/mb", "/a/c2"} {
			if _, err := m.hc.Stat(ctx, p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s after rm: %v", p, err)
			}
		}
	})

	t.Run("chmod, chown, statfs", func(t *testing.T) {
		if err := os.Chmod(m.p("a/b/file"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(m.p("a/b/file"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		st, _ := m.hc.Stat(ctx, "/a/b/file")
		if st.Perm != 0o640 || st.Owner != "nobody" || st.Group != "nogroup" {
			t.Errorf("HDFS after chmod/chown: perm %o owner %s group %s", st.Perm, st.Owner, st.Group)
		}
		fi, err := os.Stat(m.p("a/b/file"))
		if err != nil {
			t.Fatal(err)
		}
		if s := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != 0o640 || s.Uid != 65534 || s.Gid != 65534 {
			t.Errorf("stat after chmod/chown: %v uid %d gid %d", fi.Mode(), s.Uid, s.Gid)
		}
		var sfs syscall.Statfs_t
		if err := syscall.Statfs(m.dir, &sfs); err != nil {
			t.Fatal(err)
		}
		status, err := m.hc.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(sfs.Blocks) * sfs.Bsize; got != status.Capacity/fusefs.StatfsBlock*fusefs.StatfsBlock || got == 0 {
			t.Errorf("statfs size %d, NameNode capacity %d", got, status.Capacity)
		}
		if sfs.Bfree > sfs.Blocks {
			t.Errorf("statfs free %d > blocks %d", sfs.Bfree, sfs.Blocks)
		}
	})

	t.Run("permissions are the caller's", func(t *testing.T) {
		m.hdfsWrite(t, "/a/secret", []byte("root only"))
		if err := m.hc.SetPermission(ctx, "/a/secret", 0o600); err != nil {
			t.Fatal(err)
		}
		if err := m.hc.Mkdirs(ctx, "/shared", 0o777); err != nil {
			t.Fatal(err)
		}
		if err := m.hc.SetPermission(ctx, "/shared", 0o777); err != nil {
			t.Fatal(err)
		}
		err := gwtest.AsFSUID(65534, func() error {
			if _, err := os.ReadFile(m.p("a/secret")); !errors.Is(err, os.ErrPermission) {
				return fmt.Errorf("nobody reading a 0600 file of root: %v, want EACCES", err)
			}
			if err := os.Mkdir(m.p("a/nope"), 0o755); !errors.Is(err, os.ErrPermission) {
				return fmt.Errorf("nobody making a directory in root's 0755 directory: %v, want EACCES", err)
			}
			if err := os.Chmod(m.p("a/big"), 0o777); !errors.Is(err, os.ErrPermission) {
				return fmt.Errorf("nobody chmod of root's file: %v, want EACCES", err)
			}
			if _, err := os.ReadFile(m.p("a/big")); err != nil {
				return fmt.Errorf("nobody reading a 0644 file: %v", err)
			}
			return os.WriteFile(m.p("shared/mine"), []byte("by nobody"), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		// access(2) checks the real uid: a process of nobody's may read
		// root's 0644 file but not write it.
		cmd := exec.Command("sh", "-c", "test -r "+m.p("a/big")+" && ! test -w "+m.p("a/big")+" && test -w "+m.p("shared/mine"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("access(2) as nobody: %v %s", err, out)
		}
		st, err := m.hc.Stat(ctx, "/shared/mine")
		if err != nil || st.Owner != "nobody" {
			t.Errorf("a file written by uid 65534 is owned by %q (%v), want nobody", st.Owner, err)
		}
	})

	t.Run("a lost pipeline fails write or close", func(t *testing.T) {
		f, err := os.Create(m.p("a/doomed"))
		if err != nil {
			t.Fatal(err)
		}
		chunk := randomBytes(1<<20, 3)
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		m.c.StopDataNode(0)
		var werr error
		for i := 0; i < 6 && werr == nil; i++ {
			_, werr = f.Write(chunk)
		}
		cerr := f.Close()
		if werr == nil && cerr == nil {
			t.Fatal("with the only DataNode gone, every write and close succeeded")
		}
		t.Logf("write: %v; close: %v", werr, cerr)
		m.c.RestartDataNode(0)
	})

	t.Run("clean unmount", func(t *testing.T) {
		f, err := os.Open(m.p("a/big"))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.srv.Unmount(); err == nil {
			t.Error("unmount with an open file succeeded")
		}
		f.Close()
		if err := m.srv.Unmount(); err != nil {
			t.Fatal(err)
		}
		m.srv.Wait()
		mounts, _ := os.ReadFile("/proc/self/mounts")
		if strings.Contains(string(mounts), " "+m.dir+" ") {
			t.Errorf("%s is still in /proc/self/mounts", m.dir)
		}
		if _, err := m.hc.Stat(ctx, "/a/big"); err != nil {
			t.Error(err)
		}
	})
}

// TestListingIsCached checks that `ls -l` of a large directory costs a
// listing, not a NameNode call per file.
func TestListingIsCached(t *testing.T) {
	// Timeouts far longer than the test, so the count below does not
	// depend on its speed.
	m := mount(t, fusefs.Options{AttrTimeout: time.Hour, EntryTimeout: time.Hour})
	ctx := ctxT(t)
	const files = 1500 // more than one getListing page
	if err := m.hc.Mkdirs(ctx, "/many", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < files; i++ {
		w, err := m.hc.CreateFile(ctx, fmt.Sprintf("/many/f%04d", i), fs.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	before := rpcCalls(t, m.c)
	out, err := exec.Command("ls", "-l", m.p("many")).CombinedOutput()
	if err != nil {
		t.Fatalf("ls -l: %v %s", err, out)
	}
	calls := rpcCalls(t, m.c) - before
	if n := strings.Count(string(out), "\n"); n != files+1 {
		t.Errorf("ls -l printed %d lines, want %d", n, files+1)
	}
	if calls > 20 {
		t.Errorf("ls -l of %d files made %d NameNode calls", files, calls)
	}
	t.Logf("ls -l of %d files: %d NameNode calls", files, calls)
}

// rpcCalls reads the NameNode's count of RPC calls served.
func rpcCalls(t *testing.T, c *testcluster.Cluster) int {
	t.Helper()
	resp, err := http.Get("http://" + c.NameNode().HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "strata_namenode_rpc_calls_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(f)
		}
	}
	t.Fatal("no strata_namenode_rpc_calls_total in the NameNode's metrics")
	return 0
}

// TestDirectIO runs the data path with the page cache bypassed
// (-o direct_io): reads and writes reach the mount as issued.
func TestDirectIO(t *testing.T) {
	m := mount(t, fusefs.Options{DirectIO: true})
	data := randomBytes(3<<20+777, 4)
	f, err := os.Create(m.p("d"))
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := f.Write(data[off:min(len(data), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteAt([]byte("x"), 10); !errors.Is(err, syscall.ENOTSUP) {
		t.Errorf("pwrite at 10: %v, want ENOTSUP", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := m.hdfsRead(t, "/d"); !bytes.Equal(got, data) {
		t.Fatalf("HDFS has %d bytes, want the %d written", len(got), len(data))
	}
	r, err := os.Open(m.p("d"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Odd-sized reads cross the read-ahead windows.
	var got []byte
	buf := make([]byte, 300001)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want %d identical", len(got), len(data))
	}
}

// TestWriteOnlyAndCachedHandles writes through write-only descriptors
// (which bypass the page cache unless a handle of the file uses it) and
// other handles, open at the same time, and checks what is read back.
func TestWriteOnlyAndCachedHandles(t *testing.T) {
	m := mount(t, fusefs.Options{})
	data := randomBytes(1000+500+300, 5)
	if err := os.WriteFile(m.p("c"), data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(flag int) *os.File {
		t.Helper()
		f, err := os.OpenFile(m.p("c"), flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	readAll := func(f *os.File, want []byte) {
		t.Helper()
		got := make([]byte, len(want)+10)
		n, err := f.ReadAt(got, 0)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:n], want) {
			t.Fatalf("read %d bytes, want the %d written", n, len(want))
		}
	}
	write := func(f *os.File, b []byte) {
		t.Helper()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// An appender while a reader (using the page cache) is open.
	r := open(os.O_RDONLY)
	readAll(r, data[:1000])
	write(open(os.O_WRONLY|os.O_APPEND), data[1000:1500])
	r.Close()
	readAll(open(os.O_RDONLY), data[:1500])
	// A reader opened while a write-only handle bypasses the cache.
	w := open(os.O_WRONLY | os.O_APPEND)
	r = open(os.O_RDONLY)
	readAll(r, data[:1500])
	write(w, data[1500:])
	r.Close()
	readAll(open(os.O_RDONLY), data)
	if got := m.hdfsRead(t, "/c"); !bytes.Equal(got, data) {
		t.Fatalf("HDFS has %d bytes, want %d", len(got), len(data))
	}
}
