package mapreduce

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// refLines splits data into lines by Hadoop's rules ("\n", "\r\n", "\r";
// a final line without terminator; a leading UTF-8 BOM dropped), as
// records of TextInputFormat.
func refLines(data []byte) []testRecord {
	var out []testRecord
	for i := 0; i < len(data); {
		start := i
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		line := data[start:i]
		if start == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if i < len(data) {
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			i++
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], uint64(start))
		out = append(out, testRecord{string(k[:]), string(line)})
	}
	return out
}

// checkLines checks that got holds exactly data's lines with their
// offsets, each once, in order.
func checkLines(t *testing.T, data []byte, got []testRecord) {
	t.Helper()
	want := refLines(data)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: key %x value %.40q, want key %x value %.40q",
				i, got[i].key, got[i].value, want[i].key, want[i].value)
		}
	}
}

// lineEnds returns the offsets just after each line terminator.
func lineEnds(data []byte) []int64 {
	var out []int64
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			out = append(out, int64(i+1))
		case data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			out = append(out, int64(i+1))
		}
	}
	return out
}

func TestTextInputSplitsReadEveryLineOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var mixed bytes.Buffer
	endings := []string{"\n", "\r\n", "\r", "\n\n", "\r\n\r\n"}
	for i := 0; i < 400; i++ {
		mixed.WriteString(strings.Repeat(string(rune('a'+i%26)), rng.Intn(30)))
		mixed.WriteString(endings[rng.Intn(len(endings))])
	}
	mixed.WriteString("last line without newline")
	// A "\r\n" straddling the 64 KiB read buffer, then a long line.
	straddle := append(bytes.Repeat([]byte("y"), 64<<10-1), "\r\nz\n"...)
	straddle = append(straddle, bytes.Repeat([]byte("w"), 200<<10)...)
	straddle = append(straddle, "\nend\n"...)
	files := map[string][]byte{
		"simple":   []byte("a\nbb\n\nccc\r\ndddd\n\r\n\reee\rfff"),
		"mixed":    mixed.Bytes(),
		"straddle": straddle,
		"huge":     bytes.Repeat([]byte("h"), 300<<10), // one line, no newline
		"hugenl":   append(bytes.Repeat([]byte("h"), 300<<10), '\n'),
		"newlines": []byte("\n\n\n\r\r\n\n"),
		"bom":      []byte("\xEF\xBB\xBFfirst\nsecond\n"),
		"one":      []byte("x"),
		"empty":    nil,
	}
	dir := t.TempDir()
	env, c := testLocalEnv()
	for name, data := range files {
		writeTestFile(t, dir+"/"+name, data)
		uri := "file://" + dir + "/" + name
		sizes := []int64{1, 2, 3, 7, 10, 13, 64, 100, 1000, 4096, 65536, 1 << 20}
		// Split sizes falling exactly on line ends (and one past them).
		if ends := lineEnds(data); len(ends) > 0 {
			for _, e := range []int64{ends[0], ends[len(ends)/2], ends[0] + 1} {
				sizes = append(sizes, e)
			}
		}
		for _, size := range sizes {
			if size < 1 || (int64(len(data))/size > 20000) {
				continue
			}
			splits, err := TextInputFormat{}.Splits(context.Background(), env, withSplitSize(c, size), []string{uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 && (len(splits) != 1 || splits[0].Length != 0) {
				t.Errorf("%s: splits %+v", name, splits)
			}
			slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
			got, err := readSplits(t, TextInputFormat{}, env, c, splits)
			if err != nil {
				t.Fatalf("%s, split size %d: %v", name, size, err)
			}
			t.Run(fmt.Sprintf("%s/size%d", name, size), func(t *testing.T) { checkLines(t, data, got) })
		}
		// Cuts at every line end, and at random places.
		for round := 0; round < 5; round++ {
			cuts := randomCuts(rng, int64(len(data)), 1+rng.Intn(50))
			if round == 0 {
				cuts = lineEnds(data)
			}
			got, err := readSplits(t, TextInputFormat{}, env, c, cutSplits(uri, int64(len(data)), cuts))
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%s/cuts%d", name, round), func(t *testing.T) { checkLines(t, data, got) })
		}
	}
}

func TestTextInputLongLines(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	data := []byte("short\n" + strings.Repeat("L", 100) + "\nok\n" + strings.Repeat("M", 50) + "\r\nend")
	writeTestFile(t, dir+"/f", data)
	splits, err := TextInputFormat{}.Splits(context.Background(), env, c, []string{dir + "/f"})
	if err != nil {
		t.Fatal(err)
	}
	// Explicit maximum: longer lines are skipped, as in Hadoop.
	c2 := c.Clone()
	c2.Set(KeyLineMaxLength, "10")
	got, err := readSplits(t, TextInputFormat{}, env, c2, splits)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, r := range got {
		vals = append(vals, r.value)
	}
	if want := []string{"short", "ok", "end"}; !slices.Equal(vals, want) {
		t.Errorf("with maxlength 10: %q, want %q", vals, want)
	}
	// Default maximum: a longer line is an error naming the offset.
	defer func(old int64) { defaultMaxLine = old }(defaultMaxLine)
	defaultMaxLine = 60
	_, err = readSplits(t, TextInputFormat{}, env, c, splits)
	if err == nil || !strings.Contains(err.Error(), "line at offset 6 is longer than 60 bytes") || !strings.Contains(err.Error(), KeyLineMaxLength) {
		t.Errorf("default limit: %v", err)
	}
}

func TestKeyValueTextInput(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	writeTestFile(t, dir+"/f", []byte("k1\tv1\nk2\tv2\twith tab\nnokey\n\tempty key\nk3\t\n"))
	splits, err := KeyValueTextInputFormat{}.Splits(context.Background(), env, withSplitSize(c, 5), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
	got, err := readSplits(t, KeyValueTextInputFormat{}, env, c, splits)
	if err != nil {
		t.Fatal(err)
	}
	want := []testRecord{{"k1", "v1"}, {"k2", "v2\twith tab"}, {"nokey", ""}, {"", "empty key"}, {"k3", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	c.Set(KeyKeyValueSeparator, ",;")
	writeTestFile(t, dir+"/f", []byte("a,b;c\n"))
	got, err = readSplits(t, KeyValueTextInputFormat{}, env, c, []InputSplit{{Path: "file://" + dir + "/f", Length: 6}})
	if err != nil || !slices.Equal(got, []testRecord{{"a", "b;c"}}) {
		t.Errorf("separator ',': %q, %v", got, err)
	}
}

func TestTextInputCompressed(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	var plain bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&plain, "line number %d\n", i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	writeTestFile(t, dir+"/f.gz", gz.Bytes())
	splits, err := TextInputFormat{}.Splits(context.Background(), env, withSplitSize(c, 100), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 1 || splits[0].Length != int64(gz.Len()) {
		t.Fatalf("a .gz file is one split: %+v", splits)
	}
	got, err := readSplits(t, TextInputFormat{}, env, c, splits)
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, plain.Bytes(), got)
	writeTestFile(t, dir+"/bad.gz", []byte("not gzip at all"))
	if _, err := readSplits(t, TextInputFormat{}, env, c, []InputSplit{{Path: "file://" + dir + "/bad.gz", Length: 15}}); err == nil {
		t.Error("corrupt .gz: no error")
	}
}
