package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
)

func init() {
	register(command{name: "fuse", summary: "mount HDFS as a local file system: fuse [-o ro,allow_other,...] MOUNTPOINT", run: runFuse})
}

const fuseUsage = `Usage: strata fuse [-o OPTION[,OPTION...]] MOUNTPOINT

Mounts the HDFS of fs.defaultFS on MOUNTPOINT and serves it in the
foreground until Ctrl-C or SIGTERM, which unmount it (or until
'fusermount3 -u MOUNTPOINT').

Options:
  ro                 read-only
  rw                 read-write (the default)
  allow_other        let other local users use the mount
  direct_io          bypass the kernel page cache (faster streaming; no shared mmap)
  user=NAME          the HDFS user uid 0 and the mounting uid act as
  attr_timeout=SECS  attribute cache time (default 1; 0 turns it off)
  entry_timeout=SECS name and listing cache time (default 1; 0 turns it off)
  readahead=BYTES    read-ahead window per open file (default 4m)
  max_write=BYTES    largest FUSE request (default and most 1m)
  fsname=NAME        the source shown by mount and df
  debug              log every FUSE request
`

// parseFuseOptions parses -o values into o.
func parseFuseOptions(list string, o *fusefs.Options) error {
	seconds := func(v string) (time.Duration, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("bad number of seconds %q", v)
		}
		if f == 0 {
			return -1, nil // no caching
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	valued := map[string]bool{"user": true, "fsname": true, "attr_timeout": true, "entry_timeout": true, "readahead": true, "max_write": true}
	for _, opt := range strings.Split(list, ",") {
		k, v, hasV := strings.Cut(strings.TrimSpace(opt), "=")
		var err error
		switch k {
		case "":
		case "ro":
			o.ReadOnly = true
		case "rw":
			o.ReadOnly = false
		case "allow_other":
			o.AllowOther = true
		case "direct_io":
			o.DirectIO = true
		case "debug":
			o.Debug = true
		case "user":
			o.User = v
		case "fsname":
			o.FsName = v
		case "attr_timeout":
			o.AttrTimeout, err = seconds(v)
		case "entry_timeout":
			o.EntryTimeout, err = seconds(v)
		case "readahead":
			o.ReadAhead, err = parseSize(v)
		case "max_write":
			o.MaxWrite, err = parseSize(v)
		default:
			return fmt.Errorf("unknown option %q", opt)
		}
		if err == nil && !hasV && valued[k] {
			err = errors.New("needs a value")
		}
		if err != nil {
			return fmt.Errorf("option %s: %v", k, err)
		}
	}
	return nil
}

// parseSize parses a byte count with an optional k, m or g suffix.
func parseSize(v string) (int, error) {
	mult := 1
	switch strings.ToLower(v[len(v)-min(len(v), 1):]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", v)
	}
	return n * mult, nil
}

func runFuse(ctx context.Context, env *Env, args []string) int {
	var o fusefs.Options
	var dir string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprint(env.Stdout, fuseUsage)
			return 0
		case a == "-o" && i+1 < len(args):
			i++
			if err := parseFuseOptions(args[i], &o); err != nil {
				fmt.Fprintf(env.Stderr, "fuse: %v\n", err)
				return 2
			}
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			if err := parseFuseOptions(a[2:], &o); err != nil {
				fmt.Fprintf(env.Stderr, "fuse: %v\n", err)
				return 2
			}
		case strings.HasPrefix(a, "-") || dir != "":
			fmt.Fprint(env.Stderr, fuseUsage)
			return 2
		default:
			dir = a
		}
	}
	if dir == "" {
		fmt.Fprint(env.Stderr, fuseUsage)
		return 2
	}
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "fuse: %v\n", err)
		return 1
	}
	if u.Scheme != "hdfs" {
		fmt.Fprintf(env.Stderr, "fuse: FileSystem %s is not an HDFS file system (set fs.defaultFS, e.g. -fs hdfs://127.0.0.1:8020)\n", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String())
		return 1
	}
	uri := u.String()
	// Secure mode: the mounting user's ticket cache (as Hadoop's
	// fuse-dfs), or the mount's own keytab; the mount acts for each
	// calling uid's user as a proxy user.
	if err := gatewayLogin(env.Conf, keyFUSEPrincipal, keyFUSEKeytab); err != nil {
		fmt.Fprintf(env.Stderr, "fuse: %v\n", err)
		return 1
	}
	factory := func(user string) (*hdfs.Client, error) {
		fsys, err := fs.Get(context.Background(), uri, fs.Env{Conf: env.Conf, User: user})
		if err != nil {
			return nil, err
		}
		c, ok := fsys.(*hdfs.Client)
		if !ok {
			fsys.Close()
			return nil, fmt.Errorf("%s is not served by the HDFS client", uri)
		}
		return c, nil
	}
	if o.User == "" {
		o.User = fs.CurrentUser()
	}
	if o.FsName == "" {
		o.FsName = uri
	}
	o.Logger = logger(env.Stderr)
	// A second signal while files keep the mount busy detaches it lazily.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	mctx, cancel := context.WithTimeout(ctx, time.Minute)
	srv, err := fusefs.Mount(mctx, factory, dir, o)
	cancel()
	if err != nil {
		fmt.Fprintf(env.Stderr, "fuse: %v\n", err)
		return 1
	}
	o.Logger.Info("mounted", "fs", uri, "mountpoint", dir, "user", o.User, "readonly", o.ReadOnly)
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	select {
	case <-done:
		o.Logger.Info("unmounted from outside", "mountpoint", dir)
		return 0
	case <-ctx.Done():
	}
	start := time.Now()
	for {
		err := srv.Unmount()
		if err == nil {
			o.Logger.Info("unmounted", "mountpoint", dir)
			return 0
		}
		o.Logger.Warn("cannot unmount yet (files are open or a process is inside); retrying, signal again to detach lazily", "err", err)
		select {
		case <-done:
			return 0
		case <-sigs:
			if time.Since(start) < time.Second {
				continue // the signal that started the unmount
			}
			o.Logger.Warn("detaching lazily; serving open files until they are closed", "mountpoint", dir)
			if out, err := exec.Command("fusermount3", "-u", "-z", dir).CombinedOutput(); err != nil {
				fmt.Fprintf(env.Stderr, "fuse: fusermount3 -u -z %s: %v %s\n", dir, err, out)
				return 1
			}
			<-done
			return 0
		case <-time.After(2 * time.Second):
		}
	}
}
