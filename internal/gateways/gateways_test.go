package gateways_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	nfsc "github.com/willscott/go-nfs-client/nfs"

	sfs "github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/nfsgw"
	"github.com/stratafs/strata/internal/testcluster"
)

// Local uids the test acts as: 0 is the cluster's superuser (the mount
// user), 1 is daemon and 65534 nobody, as in Debian's /etc/passwd, which
// the FUSE mount consults.
const (
	uidOwner    = 1
	uidIntruder = 65534
	owner       = "daemon"
	intruder    = "nobody"
)

// env is one cluster with every way in.
type env struct {
	t     *testing.T
	c     *testcluster.Cluster
	su    string
	mnt   string // FUSE mount point
	nfs   string // NFS gateway address
	web   string // http://namenode/webhdfs/v1
	hc    *hdfs.Client
	gc    *gohdfs.Client
	nfsSU *nfsclient.Conn
	// krb is set on a secure cluster (secure_test.go): who the test's
	// own clients log in as, for each user.
	krb *secureUsers
}

const blockSize = 1 << 20

func newEnv(t *testing.T) *env {
	gwtest.NeedFUSE(t)
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	e := &env{t: t, c: c, su: c.Superuser(), web: "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1"}
	factory := gwtest.ClientFactory(c, hdfs.Options{Replication: 1, BlockSize: blockSize})

	// FUSE, with its attribute and listing caches off: this test checks
	// what the other gateways did a moment ago, not the 1 s cache.
	e.mnt, _ = gwtest.MountFUSE(t, factory, fusefs.Options{User: e.su, AllowOther: true, AttrTimeout: -1, EntryTimeout: -1})
	// NFS, served in-process on a free port.
	e.nfs, _ = gwtest.ServeNFS(t, factory, nfsgw.Options{IDs: gwtest.IDs{0: e.su, uidOwner: owner, uidIntruder: intruder}})
	e.nfsSU = e.nfsConn(0)

	e.hc = c.Client(e.su)
	e.gc = e.goClient(e.su)
	return e
}

func (e *env) nfsConn(uid uint32) *nfsclient.Conn {
	e.t.Helper()
	conn, err := nfsclient.Dial(e.nfs, "/", uid, uid)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(conn.Close)
	return conn
}

func (e *env) goClient(user string) *gohdfs.Client {
	e.t.Helper()
	opts := gohdfs.ClientOptions{Addresses: []string{e.c.Addr()}, User: user}
	if e.krb != nil {
		opts = e.krb.goOptions(e.t, e.c.Addr(), user)
	}
	cl, err := gohdfs.NewClient(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cl.Close() })
	return cl
}

func (e *env) fuse(p string) string { return filepath.Join(e.mnt, filepath.FromSlash(p)) }

// --- WebHDFS over net/http ---

var noRedirect = &http.Client{
	Timeout:       time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// webDo sends one request to the NameNode as user and returns the status
// and body; a 307 is not followed.
func (e *env) webDo(method, p, user, query string, body []byte) (int, http.Header, []byte) {
	e.t.Helper()
	u := e.web + p + "?user.name=" + url.QueryEscape(user) + "&" + query
	if e.krb != nil {
		// SPNEGO as user (the filter drops user.name).
		return e.krb.webDo(e.t, method, u, user)
	}
	return e.webURL(method, u, body)
}

func (e *env) webURL(method, u string, body []byte) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, u, err)
	}
	return resp.StatusCode, resp.Header, b
}

// webCreate writes data to p with the two-step CREATE and returns the
// final status (201 on success) and body.
func (e *env) webCreate(p, user string, data []byte) (int, []byte) {
	e.t.Helper()
	st, h, body := e.webDo("PUT", p, user, "op=CREATE&blocksize="+strconv.Itoa(blockSize), nil)
	if st != http.StatusTemporaryRedirect {
		return st, body
	}
	st, _, body = e.webURL("PUT", h.Get("Location"), data)
	return st, body
}

// webOpen reads p with OPEN, following the redirect to a DataNode.
func (e *env) webOpen(p, user string) (int, []byte) {
	e.t.Helper()
	st, h, body := e.webDo("GET", p, user, "op=OPEN", nil)
	if st != http.StatusTemporaryRedirect {
		return st, body
	}
	st, _, body = e.webURL("GET", h.Get("Location"), nil)
	return st, body
}

// webList is LISTSTATUS of p as user: entries as "name type length".
func (e *env) webList(p, user string) (int, []string, []byte) {
	e.t.Helper()
	st, _, body := e.webDo("GET", p, user, "op=LISTSTATUS", nil)
	if st != http.StatusOK {
		return st, nil, body
	}
	var res struct {
		FileStatuses struct {
			FileStatus []struct {
				PathSuffix string `json:"pathSuffix"`
				Type       string `json:"type"`
				Length     int64  `json:"length"`
			}
		}
	}
	if err := json.Unmarshal(body, &res); err != nil {
		e.t.Fatalf("LISTSTATUS %s: %v in %s", p, err, body)
	}
	var out []string
	for _, s := range res.FileStatuses.FileStatus {
		out = append(out, entry(s.PathSuffix, s.Type == "DIRECTORY", s.Length))
	}
	return st, out, body
}

// remoteException decodes a WebHDFS error body's exception name.
func remoteException(body []byte) string {
	var r struct{ RemoteException struct{ Exception string } }
	json.Unmarshal(body, &r)
	return r.RemoteException.Exception
}

// --- the ways in, by name ---

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// way is one route to HDFS, acting as the superuser.
type way struct {
	name  string
	write func(e *env, p string, data []byte) error
	read  func(e *env, p string) ([]byte, error)
	mkdir func(e *env, p string) error
	list  func(e *env, p string) ([]string, error) // "name type length", any order
}

func entry(name string, dir bool, length int64) string {
	if dir {
		return name + " dir"
	}
	return fmt.Sprintf("%s file %d", name, length)
}

var ways = []way{
	{
		name:  "fuse",
		write: func(e *env, p string, data []byte) error { return os.WriteFile(e.fuse(p), data, 0o644) },
		read:  func(e *env, p string) ([]byte, error) { return os.ReadFile(e.fuse(p)) },
		mkdir: func(e *env, p string) error { return os.Mkdir(e.fuse(p), 0o755) },
		list: func(e *env, p string) ([]string, error) {
			ents, err := os.ReadDir(e.fuse(p))
			var out []string
			for _, d := range ents {
				fi, err := d.Info()
				if err != nil {
					return nil, err
				}
				out = append(out, entry(d.Name(), d.IsDir(), fi.Size()))
			}
			return out, err
		},
	},
	{
		name: "nfs",
		write: func(e *env, p string, data []byte) error {
			_, err := e.nfsSU.Copy(p, 0o644, bytes.NewReader(data), 256<<10, 4)
			return err
		},
		read: func(e *env, p string) ([]byte, error) {
			var b bytes.Buffer
			_, err := e.nfsSU.ReadTo(&b, p, 256<<10, 4)
			return b.Bytes(), err
		},
		mkdir: func(e *env, p string) error { _, err := e.nfsSU.Mkdir(p, 0o755); return err },
		list: func(e *env, p string) ([]string, error) {
			ents, err := e.nfsSU.ReadDirPlus(p)
			var out []string
			for _, d := range ents {
				if d.FileName != "." && d.FileName != ".." {
					out = append(out, entry(d.FileName, d.IsDir(), d.Size()))
				}
			}
			return out, err
		},
	},
	{
		name: "webhdfs",
		write: func(e *env, p string, data []byte) error {
			if st, body := e.webCreate(p, e.su, data); st != http.StatusCreated {
				return fmt.Errorf("CREATE: %d %s", st, body)
			}
			return nil
		},
		read: func(e *env, p string) ([]byte, error) {
			st, body := e.webOpen(p, e.su)
			if st != http.StatusOK {
				return nil, fmt.Errorf("OPEN: %d %s", st, body)
			}
			return body, nil
		},
		mkdir: func(e *env, p string) error {
			if st, _, body := e.webDo("PUT", p, e.su, "op=MKDIRS", nil); st != http.StatusOK || string(body) != `{"boolean":true}` {
				return fmt.Errorf("MKDIRS: %d %s", st, body)
			}
			return nil
		},
		list: func(e *env, p string) ([]string, error) {
			st, out, body := e.webList(p, e.su)
			if st != http.StatusOK {
				return nil, fmt.Errorf("LISTSTATUS: %d %s", st, body)
			}
			return out, nil
		},
	},
	{
		name: "strata-hdfs",
		write: func(e *env, p string, data []byte) error {
			w, err := e.hc.Create(context.Background(), p, sfs.CreateOptions{})
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
			return w.Close()
		},
		read: func(e *env, p string) ([]byte, error) {
			f, err := e.hc.Open(context.Background(), p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		},
		mkdir: func(e *env, p string) error { return e.hc.Mkdir(context.Background(), p, 0o755) },
		list: func(e *env, p string) ([]string, error) {
			sts, err := e.hc.List(context.Background(), p)
			var out []string
			for _, s := range sts {
				out = append(out, entry(path.Base(s.Path), s.IsDir, s.Length))
			}
			return out, err
		},
	},
	{
		name: "colinmarc-hdfs",
		write: func(e *env, p string, data []byte) error {
			w, err := e.gc.Create(p)
			if err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
			return w.Close()
		},
		read:  func(e *env, p string) ([]byte, error) { return e.gc.ReadFile(p) },
		mkdir: func(e *env, p string) error { return e.gc.Mkdir(p, 0o755) },
		list: func(e *env, p string) ([]string, error) {
			fis, err := e.gc.ReadDir(p)
			var out []string
			for _, fi := range fis {
				out = append(out, entry(fi.Name(), fi.IsDir(), fi.Size()))
			}
			return out, err
		},
	},
}

func TestGateways(t *testing.T) { testGateways(t, newEnv(t)) }

// testGateways is the cross-gateway test on e's cluster, simple or
// secure (TestGatewaysSecure).
func testGateways(t *testing.T, e *env) {
	ctx := context.Background()
	if err := e.hc.Mkdirs(ctx, "/x", 0o777); err != nil {
		t.Fatal(err)
	}

	t.Run("what one writes every other reads", func(t *testing.T) {
		want := map[string][]byte{}
		for i, w := range ways {
			// Several blocks and a partial one.
			data := randomBytes(2*blockSize+1000*(i+1)+7, uint64(i))
			p := "/x/by-" + w.name
			if err := w.write(e, p, data); err != nil {
				t.Fatalf("write %s through %s: %v", p, w.name, err)
			}
			want[p] = data
		}
		for _, w := range ways {
			for _, r := range ways {
				p := "/x/by-" + w.name
				got, err := r.read(e, p)
				if err != nil {
					t.Errorf("%s reading the file %s wrote: %v", r.name, w.name, err)
				} else if !bytes.Equal(got, want[p]) {
					t.Errorf("%s reads %d bytes of the %d %s wrote, not identical", r.name, len(got), len(want[p]), w.name)
				}
			}
		}
	})

	t.Run("a tree one makes every other lists", func(t *testing.T) {
		if err := e.hc.Mkdirs(ctx, "/trees", 0o777); err != nil {
			t.Fatal(err)
		}
		for i, w := range ways {
			root := "/trees/" + w.name
			for _, d := range []string{root, root + "/a", root + "/a/b", root + "/c"} {
				if err := w.mkdir(e, d); err != nil {
					t.Fatalf("mkdir %s through %s: %v", d, w.name, err)
				}
			}
			if err := w.write(e, root+"/a/f", randomBytes(5000+i, 99)); err != nil {
				t.Fatalf("write through %s: %v", w.name, err)
			}
		}
		for i, w := range ways {
			root := "/trees/" + w.name
			want := map[string][]string{
				root:        {"a dir", "c dir"},
				root + "/a": {"b dir", entry("f", false, int64(5000+i))},
				root + "/c": nil, root + "/a/b": nil,
			}
			for _, l := range ways {
				for dir, exp := range want {
					got, err := l.list(e, dir)
					slices.Sort(got)
					if err != nil || !slices.Equal(got, exp) {
						t.Errorf("%s lists %s (made through %s) as %q, %v; want %q", l.name, dir, w.name, got, err, exp)
					}
				}
			}
		}
		// The top level agrees too.
		var names []string
		for _, w := range ways {
			names = append(names, w.name+" dir")
		}
		slices.Sort(names)
		for _, l := range ways {
			got, err := l.list(e, "/trees")
			slices.Sort(got)
			if err != nil || !slices.Equal(got, names) {
				t.Errorf("%s lists /trees as %q, %v; want %q", l.name, got, err, names)
			}
		}
	})

	t.Run("permissions are the acting user's", func(t *testing.T) {
		for uid, name := range map[int]string{uidOwner: owner, uidIntruder: intruder} {
			if u, err := user.LookupId(strconv.Itoa(uid)); err != nil || u.Username != name {
				t.Skipf("this machine has no local user %s with uid %d for the mount to map (%v)", name, uid, err)
			}
		}
		if os.Geteuid() != 0 {
			t.Skip("acting as other uids toward the mount needs root")
		}
		secret := randomBytes(100000, 5)
		if err := e.hc.Mkdirs(ctx, "/private", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := e.hc.SetPermission(ctx, "/private", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := ways[3].write(e, "/private/secret", secret); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/private", "/private/secret"} {
			if err := e.hc.SetOwner(ctx, p, owner, owner); err != nil {
				t.Fatal(err)
			}
		}

		// FUSE: the uid of the calling thread.
		err := gwtest.AsFSUID(uidIntruder, func() error {
			if _, err := os.ReadDir(e.fuse("/private")); !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("ls of another user's 0700 directory: %v, want EACCES", err)
			}
			if _, err := os.ReadFile(e.fuse("/private/secret")); !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("reading a file in another user's 0700 directory: %v, want EACCES", err)
			}
			if err := os.WriteFile(e.fuse("/private/planted"), []byte("x"), 0o644); !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("creating a file in another user's 0700 directory: %v, want EACCES", err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("FUSE as uid %d: %v", uidIntruder, err)
		}
		err = gwtest.AsFSUID(uidOwner, func() error {
			got, err := os.ReadFile(e.fuse("/private/secret"))
			if err != nil || !bytes.Equal(got, secret) {
				return fmt.Errorf("the owner reading its file: %d bytes, %v", len(got), err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("FUSE as uid %d: %v", uidOwner, err)
		}

		// NFS: the AUTH_UNIX uid of each call.
		isAcces := func(err error) bool {
			var se *nfsclient.StatusError
			var ne *nfsc.Error
			return (errors.As(err, &se) && se.Status == nfsc.NFS3ErrAcces) ||
				(errors.As(err, &ne) && ne.ErrorNum == nfsc.NFS3ErrAcces)
		}
		in := e.nfsConn(uidIntruder)
		if _, err := in.ReadDirPlus("/private"); !isAcces(err) {
			t.Errorf("NFS READDIRPLUS of another user's 0700 directory: %v, want NFS3ERR_ACCES", err)
		}
		// go-nfs answers every failed LOOKUP NFS3ERR_NOENT (Hadoop's
		// gateway says NFS3ERR_ACCES); either way the name is not given.
		if _, _, err := in.Lookup("/private/secret"); !isAcces(err) && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("NFS LOOKUP in another user's 0700 directory: %v, want it refused", err)
		}
		// Handles are inode numbers: one learnt elsewhere still does not
		// let the intruder read.
		ownerConn := e.nfsConn(uidOwner)
		_, fh, err := ownerConn.Lookup("/private/secret")
		if err != nil {
			t.Fatalf("NFS: the owner looking up its file: %v", err)
		}
		if _, _, err := in.Read(fh, 0, 4096); !isAcces(err) {
			t.Errorf("NFS READ by handle of a file in another user's 0700 directory: %v, want NFS3ERR_ACCES", err)
		}
		if _, err := in.Copy("/private/planted", 0o644, strings.NewReader("x"), 1<<20, 1); !isAcces(err) {
			t.Errorf("NFS create in another user's 0700 directory: %v, want NFS3ERR_ACCES", err)
		}
		var b bytes.Buffer
		if _, err := ownerConn.ReadAll(&b, fh, 1<<20, 1); err != nil || !bytes.Equal(b.Bytes(), secret) {
			t.Errorf("NFS: the owner reading its file: %d bytes, %v", b.Len(), err)
		}

		// WebHDFS: user.name.
		if st, _, body := e.webList("/private", intruder); st != http.StatusForbidden || remoteException(body) != "AccessControlException" {
			t.Errorf("WebHDFS LISTSTATUS of another user's 0700 directory: %d %s, want 403 AccessControlException", st, body)
		}
		if st, body := e.webOpen("/private/secret", intruder); st != http.StatusForbidden || remoteException(body) != "AccessControlException" {
			t.Errorf("WebHDFS OPEN in another user's 0700 directory: %d %s, want 403 AccessControlException", st, body)
		}
		if st, body := e.webCreate("/private/planted", intruder, []byte("x")); st != http.StatusForbidden || remoteException(body) != "AccessControlException" {
			t.Errorf("WebHDFS CREATE in another user's 0700 directory: %d %s, want 403 AccessControlException", st, body)
		}
		if st, body := e.webOpen("/private/secret", owner); st != http.StatusOK || !bytes.Equal(body, secret) {
			t.Errorf("WebHDFS: the owner reading its file: %d, %d bytes", st, len(body))
		}

		// colinmarc/hdfs as the same user.
		if _, err := e.goClient(intruder).ReadFile("/private/secret"); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("colinmarc/hdfs as %s reading in a 0700 directory of %s: %v, want permission denied", intruder, owner, err)
		}

		// Nothing was planted.
		sts, err := e.hc.List(ctx, "/private")
		if err != nil || len(sts) != 1 {
			t.Errorf("/private holds %d entries (%v), want only the secret", len(sts), err)
		}
	})

	t.Run("write-once refusals leave the file as it was", func(t *testing.T) {
		orig := randomBytes(3*blockSize+123, 11)

		// A random write through FUSE, into a file WebHDFS wrote.
		if err := ways[2].write(e, "/x/wo-fuse", orig); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(e.fuse("/x/wo-fuse"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("XXXX"), 10); !errors.Is(err, syscall.ENOTSUP) {
			t.Errorf("FUSE pwrite at offset 10 of a written file: %v, want ENOTSUP", err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("close after the refused write: %v", err)
		}

		// An overwrite in the middle through NFS, of a file FUSE wrote.
		if err := ways[0].write(e, "/x/wo-nfs", orig); err != nil {
			t.Fatal(err)
		}
		_, fh, err := e.nfsSU.Lookup("/x/wo-nfs")
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.nfsSU.Write(fh, blockSize+1000, []byte("different bytes"), nfsclient.FileSync)
		var se *nfsclient.StatusError
		if !errors.As(err, &se) || se.Status != nfsc.NFS3ErrPerm {
			t.Errorf("NFS WRITE over the middle of a written file: %v, want NFS3ERR_PERM", err)
		}
		if err := e.nfsSU.Commit(fh); err != nil {
			t.Errorf("COMMIT after the refused write: %v", err)
		}

		for _, p := range []string{"/x/wo-fuse", "/x/wo-nfs"} {
			for _, r := range ways {
				if got, err := r.read(e, p); err != nil || !bytes.Equal(got, orig) {
					t.Errorf("%s after the refused write, read through %s: %d bytes (%v), want the %d written, unchanged",
						p, r.name, len(got), err, len(orig))
				}
			}
		}
	})
}
