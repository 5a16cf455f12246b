package mapreduce

import (
	"bytes"
	"testing"
)

// FuzzKVFileReader feeds arbitrary bytes as a KV file: reading must end in
// records or an error, never a panic or an allocation past the input.
func FuzzKVFileReader(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewKVFileWriter(&buf)
	w.Write([]byte("key"), []byte("value"))
	w.Write([]byte(""), []byte("x"))
	w.Flush()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:len(buf.Bytes())/2])
	f.Add([]byte("SKV1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewKVFileReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for n := 0; r.Next(); n++ {
			if len(r.Key())+len(r.Value()) > len(data) {
				t.Fatalf("record of %d bytes from %d bytes of input", len(r.Key())+len(r.Value()), len(data))
			}
		}
	})
}
