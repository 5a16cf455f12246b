//go:build linux

package datatransfer

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// adviseWillNeed asks the kernel to start reading [off, off+n) of f into
// the page cache now (posix_fadvise POSIX_FADV_WILLNEED): Hadoop's
// DataNode readahead. It only queues the reads.
func adviseWillNeed(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_WILLNEED)
}

// SetCork sets TCP_CORK on a TCP connection: while on, the kernel sends
// only full segments, so a packet's small header write and its sendfile'd
// data leave as one stream; turning it off sends what is held.
func SetCork(c net.Conn, on bool) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	v := 0
	if on {
		v = 1
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, v)
	}); err != nil {
		return err
	}
	return serr
}
