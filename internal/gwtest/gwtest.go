// Package gwtest starts strata's gateways to HDFS inside a test — a real
// FUSE mount, an NFSv3 gateway on a free loopback port — over a cluster
// of the test harness (package testcluster), and acts as another local
// user toward the mount, so tests of one gateway or of several together
// share one way of doing it. Everything it starts ends with the test
// (t.Cleanup).
package gwtest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/nfsgw"
	"github.com/stratafs/strata/internal/testcluster"
)

// Factory makes the HDFS client a gateway acts through for one user.
type Factory = func(user string) (*hdfs.Client, error)

// ClientFactory makes, for each user, a client of h's NameNode with o's
// settings (o.Addr and o.User are set by the factory): what a gateway
// over a harness cluster acts through. The addresses stay valid across
// NameNode restarts.
func ClientFactory(h testcluster.Harness, o hdfs.Options) Factory {
	return func(user string) (*hdfs.Client, error) {
		o := o
		o.Addr, o.User = h.Addr(), user
		return hdfs.New(o)
	}
}

// NeedFUSE skips the test where the machine has no FUSE; a test can call
// it before it starts a cluster to mount.
func NeedFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("FUSE is not available on this machine (%v)", err)
	}
}

// MountFUSE mounts HDFS through factory on a new directory that every
// local user can reach, and returns the directory and the mount; it skips
// the test where the machine has no FUSE. Without o.Logger, the mount
// logs to stderr when STRATA_TEST_LOG is set. It unmounts at cleanup.
func MountFUSE(t testing.TB, factory Factory, o fusefs.Options) (string, *fusefs.Server) {
	t.Helper()
	NeedFUSE(t)
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if o.Logger == nil && os.Getenv("STRATA_TEST_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := fusefs.Mount(ctx, factory, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir, srv
}

// ServeNFS starts an NFSv3 gateway on a free loopback port and returns
// its address and the gateway. It closes the gateway at cleanup and
// fails the test if serving ended with an error.
func ServeNFS(t testing.TB, factory Factory, o nfsgw.Options) (string, *nfsgw.Gateway) {
	t.Helper()
	g, err := nfsgw.New(factory, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Serve(ln) }()
	t.Cleanup(func() {
		g.Close()
		if err := <-done; err != nil {
			t.Errorf("NFS gateway: %v", err)
		}
	})
	return ln.Addr().String(), g
}

// IDs is an NFS gateway's map between uids (and gids, the same numbers)
// and HDFS names; a number it lacks is named by its decimal digits.
type IDs map[uint32]string

// UserName implements nfsgw.IDMapper.
func (m IDs) UserName(uid uint32) string {
	if n, ok := m[uid]; ok {
		return n
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// GroupName implements nfsgw.IDMapper.
func (m IDs) GroupName(gid uint32) string { return m.UserName(gid) }

// UID implements nfsgw.IDMapper.
func (m IDs) UID(name string) (uint32, bool) {
	for id, n := range m {
		if n == name {
			return id, true
		}
	}
	return 0, false
}

// GID implements nfsgw.IDMapper.
func (m IDs) GID(name string) (uint32, bool) { return m.UID(name) }

var _ nfsgw.IDMapper = IDs(nil)

// AsFSUID runs fn on an OS thread whose file system uid and gid are uid,
// so the requests a FUSE mount gets from it carry that uid. The calling
// process must be root.
func AsFSUID(uid int, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked: it ends with the goroutine.
		runtime.LockOSThread()
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(uid), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(uid), 0, 0)
		errc <- fn()
	}()
	return <-errc
}
