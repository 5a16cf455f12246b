package experiment

import (
	"strings"
	"testing"
)

// Two experiments cannot share a work directory; the second may once the
// first is done.
func TestWorkDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockWorkDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockWorkDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another experiment") {
		t.Fatalf("a second lock of a held directory: %v", err)
	}
	unlock()
	again, err := lockWorkDir(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}
