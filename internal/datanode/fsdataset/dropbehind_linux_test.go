//go:build linux

package fsdataset

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDropBehindWrites writes the same replica with and without
// DropBehindWrites, in packet-sized pieces over several writeback
// windows, and counts the data file's pages left in the page cache once
// it is finalized (mincore): none with the setting, most without. Both
// replicas read back intact.
func TestDropBehindWrites(t *testing.T) {
	const size = 3*writebackWindow + 12345
	resident := map[bool]int{}
	for _, drop := range []bool{false, true} {
		e := newEnv(t, 1, func(c *Config) { c.DropBehindWrites = drop })
		var st unix.Statfs_t
		if err := unix.Statfs(e.cfg.Volumes[0].Path, &st); err == nil && (st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC) {
			t.Skip("the volume is in memory (tmpfs): its pages cannot be dropped")
		}
		id := uint64(21)
		data := randBytes(id, size)
		w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: 1}, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < size; off += 64 << 10 {
			if _, err := w.Write(data[off:min(off+64<<10, size)]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		resident[drop] = residentPages(t, e.replica(id).dataPath())
		e.checkReplica(id, data)
	}
	pages := (size + os.Getpagesize() - 1) / os.Getpagesize()
	if resident[false] < pages/2 {
		// A file system that does not keep what is written cached.
		t.Skipf("this file system keeps only %d of %d pages of a buffered write cached: nothing to compare", resident[false], pages)
	}
	if resident[true] != 0 {
		t.Errorf("with DropBehindWrites %d of %d pages still cached after Finalize (%d without)", resident[true], pages, resident[false])
	}
}

// residentPages is how many of path's pages are in the page cache.
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
