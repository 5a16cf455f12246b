package experiment

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/nfsgw"
	"github.com/stratafs/strata/internal/shell"
)

// paper2GatewayDir holds the gateway copies while they are written.
const paper2GatewayDir = "/paper2/gateways"

// runPaper2Gateways writes the local file src (n bytes) into the
// profile's HDFS three ways, as the paper did: the shell's -put, a copy
// into a FUSE mount, and the NFSv3 gateway; each copy must have the put
// copy's HDFS checksum. A way that cannot run on this machine (no FUSE)
// is reported as skipped with the reason.
func runPaper2Gateways(ctx context.Context, o *Options, p *Profile, env fs.Env, src string, n int64) ([]Paper2Gateway, error) {
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		return nil, err
	}
	uri := u.String()
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
	rep, err := env.Conf.GetInt("dfs.replication")
	if err != nil {
		return nil, err
	}
	if err := shellRun(ctx, env, nil, "-mkdir", "-p", paper2GatewayDir); err != nil {
		return nil, err
	}
	var out []Paper2Gateway
	for _, way := range []string{"put", "fuse", "nfs"} {
		dst := path.Join(paper2GatewayDir, way)
		g := Paper2Gateway{Profile: p.Name, Way: way, Replication: int(rep), Bytes: n}
		var write func(io.Writer) error
		var cleanup func()
		switch way {
		case "put":
			write = func(w io.Writer) error { return shellRun(ctx, env, w, "-put", src, dst) }
		case "fuse":
			mnt, unmount, err := paper2Mount(ctx, o, p, factory)
			if err != nil {
				g.Skipped = err.Error()
				break
			}
			cleanup = unmount
			write = func(io.Writer) error { return copyFile(src, filepath.Join(mnt, filepath.FromSlash(dst))) }
		case "nfs":
			addr, stop, err := paper2ServeNFS(factory, env.User)
			if err != nil {
				return nil, err
			}
			cleanup = stop
			write = func(io.Writer) error { return nfsWrite(addr, src, dst) }
		}
		if write != nil {
			g.Seconds, err = timed(o, fmt.Sprintf("  %s write %s via %s", p.Name, sizeString(n), way), fmt.Sprintf("%s-paper2-%s.log", p.Name, way), write)
		}
		if cleanup != nil {
			cleanup()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", way, err)
		}
		out = append(out, g)
	}
	// Every copy written must be the put copy's bytes.
	want, err := hdfsChecksum(ctx, env, path.Join(paper2GatewayDir, "put"))
	if err != nil {
		return nil, err
	}
	for _, g := range out {
		if g.Skipped != "" || g.Way == "put" {
			continue
		}
		got, err := hdfsChecksum(ctx, env, path.Join(paper2GatewayDir, g.Way))
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("%s copy: HDFS checksum %s, want %s (the put copy's)", g.Way, got, want)
		}
	}
	return out, removeTree(ctx, env, paper2GatewayDir)
}

// shellRun runs one `strata dfs` command in this process.
func shellRun(ctx context.Context, env fs.Env, stdout io.Writer, args ...string) error {
	if stdout == nil {
		stdout = io.Discard
	}
	var stderr bytes.Buffer
	if code := shell.Run(ctx, env, args, stdout, &stderr); code != 0 {
		return fmt.Errorf("dfs %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// hdfsChecksum is `dfs -checksum p` without the path.
func hdfsChecksum(ctx context.Context, env fs.Env, p string) (string, error) {
	var b bytes.Buffer
	if err := shellRun(ctx, env, &b, "-checksum", p); err != nil {
		return "", err
	}
	_, sum, _ := strings.Cut(strings.TrimSpace(b.String()), "\t")
	if sum == "" {
		return "", fmt.Errorf("dfs -checksum %s: no checksum in %q", p, b.String())
	}
	return sum, nil
}

// paper2Mount mounts the cluster on a new directory; the error says why
// FUSE cannot be used here.
func paper2Mount(ctx context.Context, o *Options, p *Profile, factory fusefs.ClientFactory) (string, func(), error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "", nil, fmt.Errorf("FUSE is not available on this machine (%v)", err)
	}
	mnt, err := filepath.Abs(filepath.Join(o.WorkDir, p.Name+"-fuse"))
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return "", nil, err
	}
	mctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	srv, err := fusefs.Mount(mctx, factory, mnt, fusefs.Options{})
	if err != nil {
		os.Remove(mnt)
		return "", nil, fmt.Errorf("cannot mount FUSE: %v", err)
	}
	return mnt, func() {
		srv.Unmount()
		os.Remove(mnt)
	}, nil
}

// copyFile copies src to dst as cp does: 128 KiB writes, and the time
// includes closing the file (when the mount completes the HDFS file).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 128<<10)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// paper2ServeNFS serves the NFSv3 gateway on a free loopback port; this
// process's uid acts as user.
func paper2ServeNFS(factory nfsgw.ClientFactory, user string) (string, func(), error) {
	uid := uint32(os.Getuid())
	if user == "" {
		user = fs.CurrentUser()
	}
	g, err := nfsgw.New(factory, nfsgw.Options{IDs: oneID{uid: uid, name: user}})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.Close()
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- g.Serve(ln) }()
	return ln.Addr().String(), func() {
		g.Close()
		<-done
	}, nil
}

// nfsWrite writes src as the kernel's client writes a cp onto an NFS
// mount: 1 MiB UNSTABLE WRITEs, 8 in flight, then COMMIT.
func nfsWrite(addr, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	c, err := nfsclient.Dial(addr, "/", uint32(os.Getuid()), uint32(os.Getgid()))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Copy(dst, 0o644, in, 1<<20, 8)
	return err
}

// oneID maps one uid (and gid, the same number) to an HDFS user; other
// numbers are their decimal digits.
type oneID struct {
	uid  uint32
	name string
}

func (m oneID) UserName(uid uint32) string {
	if uid == m.uid {
		return m.name
	}
	return fmt.Sprint(uid)
}
func (m oneID) GroupName(gid uint32) string { return m.UserName(gid) }
func (m oneID) UID(name string) (uint32, bool) {
	if name == m.name {
		return m.uid, true
	}
	return 0, false
}
func (m oneID) GID(name string) (uint32, bool) { return m.UID(name) }

var _ nfsgw.IDMapper = oneID{}
