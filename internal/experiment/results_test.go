package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDFSIOOnlyResults: a TestDFSIO-only run has no TeraSort tables,
// runtimes or cost files, only its own.
func TestDFSIOOnlyResults(t *testing.T) {
	r := &Results{Profiles: []ProfileResult{{Name: "a"}, {Name: "b"}}, DFSIO: []DFSIOResult{
		{Profile: "a", Op: "write", Replication: 3, Files: 1, FileSizeMB: 480, Aggregate: 72.5, Throughput: 90},
		{Profile: "b", Op: "write", Replication: 3, Files: 1, FileSizeMB: 480, Aggregate: 95, Throughput: 127},
		{Profile: "a", Op: "read", Replication: 3, Files: 1, FileSizeMB: 480, Aggregate: 106, Throughput: 153},
	}}
	var b bytes.Buffer
	r.PrintTables(&b)
	if strings.Contains(b.String(), "Table") || strings.Contains(b.String(), "NaN") || !strings.Contains(b.String(), "72.50") {
		t.Errorf("tables:\n%s", b.String())
	}
	dir := t.TempDir()
	writeFiles(t, r, dir, "results.json dfsio.csv dfsio-write-r3.svg dfsio-read-r3.svg index.html")
	// The read chart has profile b's bar left out: it has no read.
	svg, _ := os.ReadFile(filepath.Join(dir, "dfsio-read-r3.svg"))
	if got := bars(t, svg); len(got) != 1 || got[0].Series != "a" || got[0].Value != 106 {
		t.Errorf("read chart bars %+v", got)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "dfsio.csv"))
	if !strings.Contains(string(csv), "\na,write,3,1,480,72.5,90,0,0\n") {
		t.Errorf("dfsio.csv:\n%s", csv)
	}
}

// writeFiles writes r's files into dir and checks their names, in order.
func writeFiles(t *testing.T, r *Results, dir, want string) {
	t.Helper()
	files, err := r.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files %s, want %s", got, want)
	}
}
