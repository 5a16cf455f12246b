// Command hdfsread reads one file through strata's Go client API
// (hdfs.Client.OpenFile, the reader MapReduce input, FUSE and WebHDFS use)
// to stdout, for bench/reads.sh: the client path without the shell's
// local file writes.
//
//	hdfsread [-buf BYTES] hdfs://HOST:PORT/PATH > OUT
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/stratafs/strata/hdfs"
)

func main() {
	bufSize := flag.Int("buf", 1<<20, "bytes per Read call")
	flag.Parse()
	if flag.NArg() != 1 || *bufSize <= 0 || *bufSize > 64<<20 {
		fmt.Fprintln(os.Stderr, "usage: hdfsread [-buf BYTES] hdfs://HOST:PORT/PATH")
		os.Exit(2)
	}
	u, err := url.Parse(flag.Arg(0))
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		fmt.Fprintln(os.Stderr, "hdfsread: want an hdfs://host:port/path URI")
		os.Exit(2)
	}
	c, err := hdfs.New(hdfs.Options{Addr: u.Host})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hdfsread:", err)
		os.Exit(1)
	}
	defer c.Close()
	r, err := c.OpenFile(context.Background(), u.Path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hdfsread:", err)
		os.Exit(1)
	}
	out := bufio.NewWriterSize(os.Stdout, *bufSize)
	buf := make([]byte, *bufSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, "hdfsread:", werr)
				os.Exit(1)
			}
		}
		if err != nil {
			if err == io.EOF {
				break
			}
			fmt.Fprintln(os.Stderr, "hdfsread:", err)
			os.Exit(1)
		}
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "hdfsread:", err)
		os.Exit(1)
	}
}
