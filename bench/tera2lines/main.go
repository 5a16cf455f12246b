// Command tera2lines turns 100-byte TeraSort records (stdin) into
// 100-byte text lines (stdout) that GNU sort can sort: the 10-byte key as
// 20 hex digits (which sort in the same order as the bytes), 79 characters
// from the value, a newline. bench/suite.sh uses it so that GNU sort and
// TeraSort sort the same number of records of the same size by the same
// keys.
package main

import (
	"bufio"
	"encoding/hex"
	"io"
	"os"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	rec := make([]byte, 100)
	line := make([]byte, 100)
	for {
		if _, err := io.ReadFull(in, rec); err != nil {
			break
		}
		hex.Encode(line[:20], rec[:10])
		for i := 0; i < 79; i++ {
			c := rec[10+i%90]
			line[20+i] = 'A' + c%26
		}
		line[99] = '\n'
		out.Write(line)
	}
	out.Flush()
}
