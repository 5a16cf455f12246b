package streaming

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

func run(t *testing.T, args ...string) {
	t.Helper()
	c := conf.New()
	c.Set("mapreduce.cluster.local.dir", t.TempDir())
	c.Set("mapreduce.task.io.sort.mb", "1")
	job, err := NewJob(args, c)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := mapreduce.Submit(context.Background(), job, fs.Env{Conf: c, User: fs.CurrentUser()}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
}

func input(t *testing.T, lines int) (dir string, text []string) {
	dir = t.TempDir()
	var b strings.Builder
	for i := 0; i < lines; i++ {
		l := fmt.Sprintf("line %d of the %s words", i, []string{"red", "green", "blue"}[i%3])
		text = append(text, l)
		b.WriteString(l + "\n")
	}
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte(b.String()), 0o644)
	return dir, text
}

func readAll(t *testing.T, dir string) string {
	ents, _ := os.ReadDir(dir)
	var b strings.Builder
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "part-") {
			d, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			b.Write(d)
		}
	}
	return b.String()
}

func TestCatAndWcL(t *testing.T) {
	in, lines := input(t, 5000)
	out := filepath.Join(t.TempDir(), "out")
	run(t, "-input", in, "-output", out, "-mapper", "cat", "-reducer", "wc -l")
	// cat passes lines through (each line is a key without a tab); the
	// single reducer gets every line and wc -l counts them.
	if got := strings.TrimSpace(readAll(t, out)); got != fmt.Sprint(len(lines)) {
		t.Fatalf("wc -l output %q, want %d", got, len(lines))
	}
}

func TestShellWordCountWithShippedScripts(t *testing.T) {
	in, lines := input(t, 3000)
	scripts := t.TempDir()
	mapper := filepath.Join(scripts, "wcmap.sh")
	reducer := filepath.Join(scripts, "wcreduce.sh")
	os.WriteFile(mapper, []byte("#!/bin/sh\ntr -s ' ' '\\n' | awk 'NF { print $0 \"\\t1\" }'\n"), 0o755)
	os.WriteFile(reducer, []byte("#!/bin/sh\nawk -F '\\t' '{ c[$1] += $2 } END { for (w in c) print w \"\\t\" c[w] }'\n"), 0o755)
	out := filepath.Join(t.TempDir(), "out")
	run(t, "-input", in, "-output", out, "-mapper", "wcmap.sh", "-reducer", "wcreduce.sh", "-numReduceTasks", "3",
		"-file", mapper, "-file", reducer, "-combiner", "wcreduce.sh")
	want := map[string]int{}
	for _, l := range lines {
		for _, w := range strings.Fields(l) {
			want[w]++
		}
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(readAll(t, out)), "\n") {
		var w string
		var n int
		if _, err := fmt.Sscanf(strings.Replace(l, "\t", " ", 1), "%s %d", &w, &n); err != nil {
			t.Fatalf("bad output line %q", l)
		}
		got[w] += n
	}
	var ws []string
	for w := range want {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	for _, w := range ws {
		if got[w] != want[w] {
			t.Fatalf("count of %q = %d, want %d", w, got[w], want[w])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d words, want %d", len(got), len(want))
	}
}

func TestFailingCommand(t *testing.T) {
	in, _ := input(t, 10)
	c := conf.New()
	c.Set("mapreduce.cluster.local.dir", t.TempDir())
	job, err := NewJob([]string{"-input", in, "-output", filepath.Join(t.TempDir(), "o"), "-mapper", "echo boom >&2; exit 3"}, c)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	_, err = mapreduce.Submit(context.Background(), job, fs.Env{Conf: c, User: fs.CurrentUser()}, &log)
	if err == nil || !strings.Contains(err.Error(), "code 3") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing mapper: %v", err)
	}
}
