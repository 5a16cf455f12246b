package media

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/vfs"
)

// countFS is an inner FS that counts the opens it serves.
type countFS struct {
	vfs.FS
	opens int
}

func (c *countFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	c.opens++
	return c.FS.OpenFile(name, flag, perm)
}

// TestFSValueWrapsInner checks that an FS built with New emulates its own
// table over its inner FS, with nothing installed for the process.
func TestFSValueWrapsInner(t *testing.T) {
	Install(nil)
	dir := t.TempDir()
	inner := &countFS{FS: vfs.Default}
	m, err := New(inner, &Table{Devices: []Device{{Dir: dir, Preset: "test", Params: cheap}}, RequestBytes: reqBytes})
	if err != nil {
		t.Fatal(err)
	}
	before := stats(t, dir)
	f, err := vfs.Create(m, filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*os.File); ok {
		t.Fatal("file in an emulated directory is a bare *os.File")
	}
	if _, err := f.Write(make([]byte, 3000)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := since(t, dir, before); got.WriteBytes != 3000 {
		t.Fatalf("device charged %d write bytes, want 3000", got.WriteBytes)
	}
	if inner.opens != 1 {
		t.Fatalf("inner FS served %d opens, want 1", inner.opens)
	}
	// The process's Default knows nothing of m's table.
	g, err := Default().OpenFile(filepath.Join(dir, "x"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ok := g.(*os.File); !ok {
		t.Fatalf("Default with nothing installed gave %T, want *os.File", g)
	}
	// Outside the table the inner file comes back as is.
	h, err := vfs.Create(m, filepath.Join(t.TempDir(), "y"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, ok := h.(*os.File); !ok {
		t.Fatalf("outside the table New's FS gave %T, want *os.File", h)
	}
}

// TestOSFileOfPacedFile checks the zero-copy hand-off: a paced file gives
// its *os.File together with the FS to charge, a bare one gives itself.
func TestOSFileOfPacedFile(t *testing.T) {
	dir := emulate(t)
	fsys := Default()
	f, err := vfs.Create(fsys, filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	of, c, ok := vfs.OSFile(fsys, f)
	if !ok || of == nil || c == nil {
		t.Fatalf("OSFile of a paced file = %v, %v, %v", of, c, ok)
	}
	g, err := vfs.Create(vfs.Default, filepath.Join(t.TempDir(), "y"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if of, c, ok := vfs.OSFile(vfs.Default, g); !ok || of != g || c != nil {
		t.Fatalf("OSFile of an *os.File = %v, %v, %v", of, c, ok)
	}
}
