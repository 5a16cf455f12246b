// Command hdfsread reads one file through strata's Go client API
// (hdfs.Client.OpenFile, the reader MapReduce input, FUSE and WebHDFS use)
// to stdout with io.Copy, as a Go program would: bench/reads.sh's client
// path without the shell's local file writes.
//
//	hdfsread hdfs://HOST:PORT/PATH > OUT
package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/stratafs/strata/hdfs"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hdfsread hdfs://HOST:PORT/PATH")
		os.Exit(2)
	}
	u, err := url.Parse(os.Args[1])
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		fmt.Fprintln(os.Stderr, "hdfsread: want an hdfs://host:port/path URI")
		os.Exit(2)
	}
	if err := read(u.Host, u.Path); err != nil {
		fmt.Fprintln(os.Stderr, "hdfsread:", err)
		os.Exit(1)
	}
}

func read(addr, p string) error {
	c, err := hdfs.New(hdfs.Options{Addr: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := c.OpenFile(context.Background(), p)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(os.Stdout, r)
	return err
}
