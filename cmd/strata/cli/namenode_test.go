package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `strata namenode -format` formats every directory of
// dfs.namenode.name.dir with one namespace, and asks before re-formatting.
func TestNameNodeFormatAllDirs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	key := "dfs.namenode.name.dir=file://" + a + ", " + b
	var out, errb bytes.Buffer
	if code := Main([]string{"-D", key, "namenode", "-format"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("format: exit %d: %s", code, errb.String())
	}
	va, err := os.ReadFile(filepath.Join(a, "current", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	vb, err := os.ReadFile(filepath.Join(b, "current", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(va, vb) {
		t.Fatalf("the directories got different VERSIONs:\n%s\n%s", va, vb)
	}
	if n := strings.Count(out.String(), "has been successfully formatted"); n != 2 {
		t.Fatalf("%d directories reported formatted:\n%s", n, out.String())
	}

	out.Reset()
	errb.Reset()
	if code := Main([]string{"-D", key, "namenode", "-format", "-nonInteractive"}, strings.NewReader(""), &out, &errb); code == 0 {
		t.Fatal("-nonInteractive re-formatted a formatted directory")
	}
	// One "no" of two questions aborts both.
	if code := Main([]string{"-D", key, "namenode", "-format"}, strings.NewReader("Y\nN\n"), &out, &errb); code == 0 {
		t.Fatal("format went on after N")
	}
	if vb2, _ := os.ReadFile(filepath.Join(b, "current", "VERSION")); !bytes.Equal(vb, vb2) {
		t.Fatal("an aborted format changed a directory")
	}
	if code := Main([]string{"-D", key, "namenode", "-format"}, strings.NewReader("Y\ny\n"), &out, &errb); code != 0 {
		t.Fatalf("confirmed re-format: exit %d: %s", code, errb.String())
	}
	if va2, _ := os.ReadFile(filepath.Join(a, "current", "VERSION")); bytes.Equal(va, va2) {
		t.Fatal("the confirmed re-format kept the old namespace")
	}

	dup := "dfs.namenode.name.dir=" + a + "," + a + "/"
	if code := Main([]string{"-D", dup, "namenode", "-format", "-force"}, strings.NewReader(""), &out, &errb); code == 0 {
		t.Fatal("a directory listed twice was formatted")
	}
}
