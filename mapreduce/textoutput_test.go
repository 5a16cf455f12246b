package mapreduce

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

func TestTextOutputLines(t *testing.T) {
	env, c := testLocalEnv()
	out := t.TempDir() + "/out"
	cases := []struct {
		key, value []byte
	}{
		{[]byte("k"), []byte("v")},
		{[]byte("k"), nil},
		{nil, []byte("v")},
		{nil, nil},
		{[]byte("k"), []byte{}},
		{[]byte{}, []byte("v")},
	}
	att := testAttempt(env, c, out, 'm', 0, 0)
	w, err := TextOutputFormat{}.Writer(context.Background(), att, "part-m-00000")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if err := w.Write(tc.key, tc.value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	got := readTestFile(t, strings.TrimPrefix(WorkPath(att, "part-m-00000"), "file://"))
	if want := "k\tv\nk\nv\nk\t\n\tv\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}

	c.Set(KeyTextOutputSeparator, " => ")
	att = testAttempt(env, c, out, 'm', 1, 0)
	w, err = TextOutputFormat{}.Writer(context.Background(), att, "part-m-00001")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("a"), []byte("b"))
	w.Close()
	if got := readTestFile(t, strings.TrimPrefix(WorkPath(att, "part-m-00001"), "file://")); got != "a => b\n" {
		t.Errorf("separator: %q", got)
	}
}

// TestTextOutputRoundTrip writes a job's output with TextOutputFormat and
// reads it back with KeyValueTextInputFormat and TextInputFormat, plain
// and compressed.
func TestTextOutputRoundTrip(t *testing.T) {
	tasks := map[int][]testRecord{}
	var all []testRecord
	for task := 0; task < 3; task++ {
		for i := 0; i < 1000; i++ {
			r := testRecord{key: "key" + strings.Repeat("k", i%7) + string(rune('a'+task)), value: "value " + strings.Repeat("v", i%13)}
			tasks[task] = append(tasks[task], r)
			all = append(all, r)
		}
	}
	sortRecs := func(r []testRecord) {
		slices.SortFunc(r, func(a, b testRecord) int {
			if c := strings.Compare(a.key, b.key); c != 0 {
				return c
			}
			return strings.Compare(a.value, b.value)
		})
	}
	sortRecs(all)
	for _, codec := range []string{"", "gzip", DefaultCodec} {
		t.Run("codec="+codec, func(t *testing.T) {
			env, c := testLocalEnv()
			if codec != "" {
				c.Set(KeyOutputCompress, "true")
				c.Set(KeyOutputCompressCodec, codec)
			}
			out := t.TempDir() + "/out"
			runTextJob(t, env, c, out, tasks)
			names := listTestDir(t, out)
			ext := map[string]string{"": "", "gzip": ".gz", DefaultCodec: ".deflate"}[codec]
			if want := []string{SuccessFileName, "part-r-00000" + ext, "part-r-00001" + ext, "part-r-00002" + ext}; !slices.Equal(names, want) {
				t.Fatalf("output files %v, want %v", names, want)
			}
			rc := withSplitSize(c, 1000)
			splits, err := KeyValueTextInputFormat{}.Splits(context.Background(), env, rc, []string{out})
			if err != nil {
				t.Fatal(err)
			}
			if codec != "" && len(splits) != 3 {
				t.Errorf("%d splits of 3 compressed files", len(splits))
			}
			got, err := readSplits(t, KeyValueTextInputFormat{}, env, rc, splits)
			if err != nil {
				t.Fatal(err)
			}
			sortRecs(got)
			if !slices.Equal(got, all) {
				t.Errorf("KeyValueTextInputFormat read back %d records, want %d (or they differ)", len(got), len(all))
			}
			lines, err := readSplits(t, TextInputFormat{}, env, rc, splits)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(all) {
				t.Fatalf("TextInputFormat read %d lines, want %d", len(lines), len(all))
			}
			for _, l := range lines {
				k, v, ok := strings.Cut(l.value, "\t")
				if !ok || !slices.Contains(tasks[int(k[len(k)-1]-'a')], testRecord{k, v}) || len(l.key) != 8 {
					t.Fatalf("line %q at %d", l.value, binary.BigEndian.Uint64([]byte(l.key)))
				}
			}
		})
	}
	env, c := testLocalEnv()
	c.Set(KeyOutputCompress, "true")
	c.Set(KeyOutputCompressCodec, "org.apache.hadoop.io.compress.SnappyCodec")
	if err := (TextOutputFormat{}).Check(context.Background(), env, c, t.TempDir()+"/x"); err == nil || !strings.Contains(err.Error(), "SnappyCodec") {
		t.Errorf("unsupported codec: %v", err)
	}
}

func TestKVFileOutputFormat(t *testing.T) {
	ctx := context.Background()
	env, c := testLocalEnv()
	out := t.TempDir() + "/out"
	cm, err := NewCommitter(env, c, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	recs, _ := kvData(t, 800, 9)
	att := testAttempt(env, c, out, 'r', 0, 0)
	w, err := KVFileOutputFormat{}.Writer(ctx, att, PartName('r', 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write([]byte(r.key), []byte(r.value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cm.CommitTask(ctx, att); err != nil {
		t.Fatal(err)
	}
	if err := cm.CommitJob(ctx); err != nil {
		t.Fatal(err)
	}
	splits, err := KVFileInputFormat{}.Splits(ctx, env, withSplitSize(c, 30000), []string{out})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
	got, err := readSplits(t, KVFileInputFormat{}, env, c, splits)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs, got)
}
