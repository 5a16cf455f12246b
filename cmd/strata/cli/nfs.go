package cli

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nfsgw"
)

func init() {
	register(command{name: "nfs3", summary: "run the NFSv3 gateway to HDFS (NFS and MOUNT on nfs.server.port)", run: runNFS3})
}

// nameNodeOptions are the client options of fs.defaultFS (-fs) when that
// is an hdfs:// URI, else of dfs.namenode.rpc-address: their Addrs list
// every NameNode of an hdfs://<nameservice>, which calls fail over among.
func nameNodeOptions(env *Env) (hdfs.Options, error) {
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		return hdfs.Options{}, err
	}
	authority := u.Host
	if u.Scheme != "hdfs" {
		authority = namenode.RPCAddress(env.Conf)
	}
	return hdfs.OptionsFrom(env.Conf, authority)
}

// runNFS3 serves NFSv3 for the NameNode of fs.defaultFS (or
// dfs.namenode.rpc-address). Linux clients mount it with
//
//	mount -t nfs -o vers=3,proto=tcp,nolock,port=P,mountport=P host:/ /mnt
func runNFS3(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("nfs3", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	port := fl.Int("port", -1, "TCP port for NFS and MOUNT (default nfs.server.port, 2049; 0 picks a free one)")
	bind := fl.String("bind", "127.0.0.1", "address to listen on (0.0.0.0 or a host's address to serve other hosts)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "nfs3: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	if *port < 0 {
		p, err := env.Conf.GetInt("nfs.server.port")
		if err != nil {
			fmt.Fprintf(env.Stderr, "nfs3: nfs.server.port: %v\n", err)
			return 2
		}
		*port = int(p)
	}
	timeout, err := env.Conf.GetDuration("nfs.stream.timeout", time.Millisecond)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: nfs.stream.timeout: %v\n", err)
		return 2
	}
	exports, err := nfsgw.ParseExports(env.Conf.Get("nfs.exports.allowed.hosts"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: %v\n", err)
		return 2
	}
	opts, err := nameNodeOptions(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: %v\n", err)
		return 2
	}
	// Secure mode: the gateway's own principal (Hadoop's keys), acting
	// for each uid's user as a proxy user.
	if err := gatewayLogin(env.Conf, keyNFSPrincipal, keyNFSKeytab); err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: %v\n", err)
		return 1
	}
	newClient := func(user string) (*hdfs.Client, error) {
		o := opts
		o.User = user
		return hdfs.New(o)
	}
	log := logger(env.Stderr)
	ln, err := net.Listen("tcp", net.JoinHostPort(*bind, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: %v\n", err)
		return 1
	}
	p := ln.Addr().(*net.TCPAddr).Port
	log.Info("nfs3: serving NFSv3 and MOUNT", "addr", ln.Addr().String(), "namenodes", opts.Addrs,
		"mount", fmt.Sprintf("mount -t nfs -o vers=3,proto=tcp,nolock,port=%d,mountport=%d HOST:/ /mnt", p, p))
	if err := nfsgw.Serve(ctx, ln, newClient, nfsgw.Options{StreamTimeout: timeout, Exports: exports, Logger: log}); err != nil {
		fmt.Fprintf(env.Stderr, "nfs3: %v\n", err)
		return 1
	}
	log.Info("nfs3: stopped")
	return 0
}
