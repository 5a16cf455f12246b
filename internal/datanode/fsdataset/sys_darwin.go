//go:build darwin

package fsdataset

import (
	"os"
	"syscall"
)

const oDirect = 0 // macOS has F_NOCACHE, not O_DIRECT

// startWriteback and awaitWriteback are Linux's sync_file_range;
// elsewhere Finalize's fsync writes everything.
func startWriteback(*os.File, int64, int64) error { return syscall.ENOSYS }
func awaitWriteback(*os.File, int64, int64) error { return syscall.ENOSYS }

// dropCache is Linux's posix_fadvise DONTNEED; elsewhere the pages stay.
func dropCache(*os.File, int64, int64) {}
