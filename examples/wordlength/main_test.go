package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltProgram builds this program as a user would and runs its job.
func TestBuiltProgram(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "wordlength")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.txt"), []byte("a bb ccc\ndd e fff gggg\n\nhhhhhhhhhh\n"), 0o644)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "-D", "mapreduce.cluster.local.dir="+filepath.Join(dir, "local"), "wordlength", in, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "part-r-00000"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\t2\n2\t2\n3\t2\n4\t1\n10\t1\n"; string(b) != want {
		t.Fatalf("output %q, want %q", b, want)
	}
	// An unknown job name is a clear error.
	b, _ = exec.Command(bin, "nosuchjob").CombinedOutput()
	if !strings.Contains(string(b), `unknown job "nosuchjob"`) {
		t.Errorf("unknown job: %s", b)
	}
}
