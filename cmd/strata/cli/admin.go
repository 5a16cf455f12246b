package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/storage"
)

func init() {
	register(command{name: "storagepolicies", summary: "list, set, get and unset HDFS storage policies", run: runStoragePolicies})
	register(command{name: "dfsadmin", summary: "HDFS administration (-report, -safemode, -refreshNodes, -printTopology)", run: runDFSAdmin})
	register(command{name: "getconf", summary: "print configuration (-confKey KEY, -namenodes)", run: runGetConf})
	register(command{name: "version", summary: "print the version", run: runVersion})
}

// hdfsClient connects to the NameNode of fs.defaultFS, which must be
// hdfs://: host[:port], or a nameservice whose NameNodes it fails over
// among.
func hdfsClient(env *Env) (*hdfs.Client, error) {
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "hdfs" {
		return nil, fmt.Errorf("FileSystem %s is not an HDFS file system (set fs.defaultFS, e.g. -fs hdfs://127.0.0.1:8020)", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String())
	}
	opts, err := hdfs.OptionsFrom(env.Conf, u.Host)
	if err != nil {
		return nil, err
	}
	opts.User = fs.CurrentUser()
	return hdfs.New(opts)
}

// hadoopError prints err the way Hadoop's tools do: the remote message
// alone when there is one.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		var re *hdfs.RemoteError
		if errors.As(pe.Err, &re) {
			return re.Message
		}
		return pe.Err.Error()
	}
	return err.Error()
}

func runStoragePolicies(ctx context.Context, env *Env, args []string) int {
	usage := func() int {
		fmt.Fprintln(env.Stderr, "Usage: strata storagepolicies [-listPolicies] [-setStoragePolicy -path <path> -policy <policy>] [-getStoragePolicy -path <path>] [-unsetStoragePolicy -path <path>]")
		return 1
	}
	if len(args) == 0 {
		return usage()
	}
	cmd := args[0]
	var path, policy string
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-path", "-policy":
			if i+1 >= len(args) {
				fmt.Fprintf(env.Stderr, "%s: %s needs an argument\n", cmd, args[i])
				return usage()
			}
			if args[i] == "-path" {
				path = args[i+1]
			} else {
				policy = args[i+1]
			}
			i++
		default:
			fmt.Fprintf(env.Stderr, "%s: unexpected argument %q\n", cmd, args[i])
			return usage()
		}
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "storagepolicies: %v\n", err)
		return 1
	}
	defer c.Close()
	need := func(what, v string) bool {
		if v == "" {
			fmt.Fprintf(env.Stderr, "Please specify the %s for %s.\n", what, cmd)
			return false
		}
		return true
	}
	switch cmd {
	case "-listPolicies":
		ps, err := c.StoragePolicies(ctx)
		if err != nil {
			fmt.Fprintln(env.Stderr, errText(err))
			return 2
		}
		fmt.Fprintln(env.Stdout, "Block Storage Policies:")
		for _, p := range ps {
			fmt.Fprintf(env.Stdout, "\t%s\n", policyString(p))
		}
	case "-setStoragePolicy":
		if !need("path", path) || !need("policy name", policy) {
			return 1
		}
		if err := c.SetStoragePolicy(ctx, path, policy); err != nil {
			fmt.Fprintln(env.Stderr, errText(err))
			return 2
		}
		fmt.Fprintf(env.Stdout, "Set storage policy %s on %s\n", policy, path)
	case "-getStoragePolicy":
		if !need("path", path) {
			return 1
		}
		p, err := c.GetStoragePolicy(ctx, path)
		if err != nil {
			fmt.Fprintln(env.Stderr, errText(err))
			return 2
		}
		fmt.Fprintf(env.Stdout, "The storage policy of %s:\n%s\n", path, policyString(p))
	case "-unsetStoragePolicy":
		if !need("path", path) {
			return 1
		}
		if err := c.SetStoragePolicy(ctx, path, ""); err != nil {
			fmt.Fprintln(env.Stderr, errText(err))
			return 2
		}
		fmt.Fprintf(env.Stdout, "Unset storage policy from %s\n", path)
	default:
		fmt.Fprintf(env.Stderr, "Can't understand command '%s'\n", cmd)
		return usage()
	}
	return 0
}

func policyString(p hdfs.StoragePolicy) string {
	conv := func(names []string) []storage.Type {
		var out []storage.Type
		for _, n := range names {
			if t, err := storage.ParseType(n); err == nil {
				out = append(out, t)
			}
		}
		return out
	}
	return storage.Policy{ID: p.ID, Name: p.Name, Types: conv(p.StorageTypes), CreationFallbacks: conv(p.CreationFallbacks), ReplicationFallbacks: conv(p.ReplicationFallbacks)}.String()
}

func runDFSAdmin(ctx context.Context, env *Env, args []string) int {
	if code, ok := dfsadminQuota(ctx, env, args); ok {
		return code
	}
	if code, done := runDFSAdminNodes(ctx, env, args); done {
		return code
	}
	if len(args) > 0 && (args[0] == "-allowSnapshot" || args[0] == "-disallowSnapshot") {
		return dfsadminSnapshot(ctx, env, args)
	}
	if len(args) < 2 || args[0] != "-safemode" {
		fmt.Fprintln(env.Stderr, dfsadminUsage)
		fmt.Fprintln(env.Stderr, "\t[-setQuota <quota> <dirname>...<dirname>] [-clrQuota <dirname>...<dirname>]")
		fmt.Fprintln(env.Stderr, "\t[-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>] [-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>]")
		return 1
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "dfsadmin: %v\n", err)
		return 1
	}
	defer c.Close()
	action := args[1]
	wait := action == "wait"
	if wait {
		action = "get"
	}
	for {
		on, err := c.SafeMode(ctx, action)
		if err != nil {
			fmt.Fprintf(env.Stderr, "safemode: %s\n", errText(err))
			return 1
		}
		if wait && on {
			select {
			case <-ctx.Done():
				return 1
			case <-time.After(time.Second):
				continue
			}
		}
		state := "OFF"
		if on {
			state = "ON"
		}
		fmt.Fprintf(env.Stdout, "Safe mode is %s\n", state)
		return 0
	}
}

func runGetConf(ctx context.Context, env *Env, args []string) int {
	if len(args) == 2 && args[0] == "-confKey" {
		if _, known := conf.LookupKey(args[1]); !known && !env.Conf.IsSet(args[1]) {
			fmt.Fprintf(env.Stderr, "Configuration %s is missing.\n", args[1])
			return 1
		}
		fmt.Fprintln(env.Stdout, env.Conf.Get(args[1]))
		return 0
	}
	if len(args) == 1 && args[0] == "-namenodes" {
		hosts, err := nameNodeHosts(env)
		if err != nil {
			fmt.Fprintf(env.Stderr, "getconf: %v\n", err)
			return 1
		}
		fmt.Fprintln(env.Stdout, strings.Join(hosts, " "))
		return 0
	}
	fmt.Fprintln(env.Stderr, "Usage: strata getconf [-confKey KEY] [-namenodes]")
	return 1
}

// nameNodeHosts lists the NameNode hosts, as Hadoop's getconf
// -namenodes: every member of every nameservice in dfs.nameservices, else
// the one NameNode of dfs.namenode.rpc-address or fs.defaultFS.
func nameNodeHosts(env *Env) ([]string, error) {
	addrs := []string{namenode.RPCAddress(env.Conf)}
	if ids := nameservice.IDs(env.Conf); len(ids) > 0 {
		addrs = nil
		for _, id := range ids {
			ns, ok, err := nameservice.Lookup(env.Conf, id)
			if err != nil {
				return nil, err
			}
			if ok {
				addrs = append(addrs, ns.RPCAddrs()...)
			}
		}
	}
	var hosts []string
	for _, a := range addrs {
		host := a
		if i := strings.LastIndexByte(a, ':'); i >= 0 {
			host = a[:i]
		}
		hosts = append(hosts, host)
	}
	return hosts, nil
}

func runVersion(ctx context.Context, env *Env, args []string) int {
	v := "(devel)"
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " revision " + s.Value[:12]
			}
		}
	}
	fmt.Fprintf(env.Stdout, "strata %s%s\n", v, rev)
	fmt.Fprintf(env.Stdout, "Compiled with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
