package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateTempAndHelpers(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateTemp(Default, dir, "merge-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(f.Name())
	if !strings.HasPrefix(name, "merge-") || !strings.HasSuffix(name, ".tmp") || len(name) <= len("merge-.tmp") {
		t.Fatalf("temp name %q", name)
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := ReadFile(Default, f.Name()); err != nil || string(b) != "abc" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if err := WriteFile(Default, filepath.Join(dir, "w"), []byte("xy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(Default, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Default, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("open of a missing file: %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in_use.lock")
	l, err := Default.Lock(p)
	if err != nil {
		t.Skipf("locking unsupported: %v", err)
	}
	if _, err := Default.Lock(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock = %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Default.Lock(p)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	l2.Close()
}

func TestOrAndStatfs(t *testing.T) {
	if Or(nil) != Default {
		t.Fatal("Or(nil) is not Default")
	}
	du, err := Default.Statfs(t.TempDir())
	if errors.Is(err, errors.ErrUnsupported) {
		return
	}
	if err != nil || du.Total <= 0 || du.Free < 0 || du.Free > du.Total {
		t.Fatalf("Statfs = %+v, %v", du, err)
	}
}
