// Command nfscp copies one file into or out of an NFSv3 server (such as
// `strata nfs3`) the way the Linux kernel's client moves the bytes of a
// `cp` onto or `cat` from an NFS mount: 1 MiB UNSTABLE WRITEs with several
// in flight and a COMMIT at the end; 1 MiB READs with several in flight
// (read-ahead). bench/gateways.sh uses it on machines whose kernels have
// no NFS client.
//
//	nfscp [-uid N] [-chunk BYTES] [-inflight N] put LOCAL HOST:PORT REMOTE
//	nfscp [-uid N] [-chunk BYTES] [-inflight N] get HOST:PORT REMOTE   (to stdout)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/stratafs/strata/internal/nfsclient"
)

func main() {
	uid := flag.Int("uid", os.Getuid(), "AUTH_UNIX uid (and gid) to act as")
	chunk := flag.Int("chunk", 1<<20, "bytes per WRITE or READ")
	inflight := flag.Int("inflight", 8, "WRITEs or READs in flight")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: nfscp [flags] put LOCAL HOST:PORT REMOTE | get HOST:PORT REMOTE")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if *chunk <= 0 || *chunk > 16<<20 || *inflight <= 0 || *inflight > 256 || len(args) < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	start := time.Now()
	var n int64
	switch {
	case args[0] == "put" && len(args) == 4:
		n, err = put(args[1], args[2], args[3], uint32(*uid), *chunk, *inflight)
	case args[0] == "get" && len(args) == 3:
		n, err = get(args[1], args[2], uint32(*uid), *chunk, *inflight)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nfscp: %v\n", err)
		os.Exit(1)
	}
	d := time.Since(start)
	fmt.Fprintf(os.Stderr, "nfscp: %s %d bytes in %.2f s (%.0f MB/s)\n", args[0], n, d.Seconds(), float64(n)/1e6/d.Seconds())
}

func put(local, addr, remote string, uid uint32, chunk, inflight int) (int64, error) {
	f, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	c, err := nfsclient.Dial(addr, "/", uid, uid)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.Copy(remote, 0o644, f, chunk, inflight)
}

func get(addr, remote string, uid uint32, chunk, inflight int) (int64, error) {
	c, err := nfsclient.Dial(addr, "/", uid, uid)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	n, err := c.ReadTo(w, remote, chunk, inflight)
	if err != nil {
		return n, err
	}
	return n, w.Flush()
}
