//go:build !linux

package datatransfer

import (
	"net"
	"os"
)

// adviseWillNeed and SetCork are Linux calls; elsewhere the kernel's own
// readahead and Nagle-free writes do.
func adviseWillNeed(f *os.File, off, n int64) {}

// SetCork does nothing outside Linux.
func SetCork(c net.Conn, on bool) error { return nil }
