//go:build !unix

package media

import (
	"errors"
	"hash/fnv"
	"os"
)

// mapState is unsupported here: device state stays private to the
// process.
func mapState(string) ([]byte, error) {
	return nil, errors.New("shared device state needs a unix platform")
}

// processAlive is never asked here: the lock is private to the process.
func processAlive(int) bool { return true }

// fileID identifies the file by name where no inode is available.
func fileID(fi os.FileInfo) uint64 {
	h := fnv.New64a()
	h.Write([]byte(fi.Name()))
	return h.Sum64() | 1<<63
}
