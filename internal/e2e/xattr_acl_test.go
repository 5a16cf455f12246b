package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stratafs/strata/internal/testcluster"
)

// These tests run the real binary: a NameNode process, colinmarc/hdfs as
// an outside client, and `strata dfs` for the shell's output.

func goHDFS(t *testing.T, p *testcluster.Processes, user string) *gohdfs.Client {
	t.Helper()
	c, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{p.Addr()}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestXAttrsThroughGoClient drives colinmarc/hdfs's xattr calls and its
// MkdirAll under a directory without traverse permission, before and
// after a restart and a kill -9.
func TestXAttrsThroughGoClient(t *testing.T) {
	p := newNameNode(t)
	su := goHDFS(t, p, p.Superuser())
	bob := goHDFS(t, p, "bob")

	if err := su.MkdirAll("/x", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := su.CreateEmptyFile("/x/f"); err != nil {
		t.Fatal(err)
	}
	if err := su.SetXAttr("/x/f", "user.color", "blue"); err != nil {
		t.Fatal(err)
	}
	if err := su.SetXAttr("/x/f", "user.color", "green"); err != nil { // CREATE|REPLACE replaces
		t.Fatal(err)
	}
	if err := su.SetXAttr("/x/f", "trusted.level", "3"); err != nil {
		t.Fatal(err)
	}
	if err := su.SetXAttr("/x/f", "user.gone", "x"); err != nil {
		t.Fatal(err)
	}
	if err := su.RemoveXAttr("/x/f", "user.gone"); err != nil {
		t.Fatal(err)
	}
	if err := su.RemoveXAttr("/x/f", "user.gone"); err == nil || !strings.Contains(err.Error(), "one or more keys not found") {
		t.Errorf("removing a missing xattr: %v", err)
	}
	if _, err := su.GetXAttrs("/x/f", "user.gone"); err == nil || !strings.Contains(err.Error(), "one or more keys not found") {
		t.Errorf("getting a missing xattr: %v", err)
	}
	// Only the superuser sees trusted.*; anyone may read user.* here (r--).
	if m, err := bob.ListXAttrs("/x/f"); err != nil || len(m) != 1 {
		t.Errorf("bob's list: %v %v, want user.color alone", m, err)
	}
	if err := bob.SetXAttr("/x/f", "user.color", "red"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob sets an xattr on root's file: %v, want permission denied", err)
	}
	if _, err := bob.GetXAttrs("/x/f", "trusted.level"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob reads trusted.*: %v, want permission denied", err)
	}
	if err := su.SetXAttr("/x/f", "system.x", "1"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("system.* set through the API: %v, want permission denied", err)
	}

	// Ancestors' traverse permission is checked before a missing
	// component is looked at (Hadoop's order): permission denied, not
	// file not found.
	if err := su.MkdirAll("/locked", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		err  error
	}{
		{"MkdirAll /locked/a/b", bob.MkdirAll("/locked/a/b", 0o755)},
		{"Mkdir /locked/a/b", bob.Mkdir("/locked/a/b", 0o755)},
		{"CreateEmptyFile /locked/a/f", bob.CreateEmptyFile("/locked/a/f")},
		{"Mkdir /x/a/b (no write on /x)", bob.Mkdir("/x/a/b", 0o755)},
		{"MkdirAll /x/a/b (no write on /x)", bob.MkdirAll("/x/a/b", 0o755)},
	} {
		if !errors.Is(call.err, os.ErrPermission) {
			t.Errorf("%s as bob: %v, want permission denied", call.name, call.err)
		}
	}
	if _, err := bob.Stat("/locked/a"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("stat under /locked as bob: %v, want permission denied", err)
	}

	count := 2
	check := func(when string) {
		t.Helper()
		su := goHDFS(t, p, p.Superuser())
		m, err := su.GetXAttrs("/x/f", "user.color", "trusted.level")
		if err != nil || m["user.color"] != "green" || m["trusted.level"] != "3" || len(m) != 2 {
			t.Fatalf("%s: xattrs %v %v", when, m, err)
		}
		all, err := su.ListXAttrs("/x/f")
		if err != nil || len(all) != count {
			t.Fatalf("%s: list %v %v", when, all, err)
		}
	}
	check("before restart")
	p.RestartNameNode()
	check("after restart")
	if err := goHDFS(t, p, p.Superuser()).SetXAttr("/x/f", "user.late", "1"); err != nil {
		t.Fatal(err)
	}
	p.KillNameNode()
	p.StartNameNode()
	count = 3
	check("after kill -9")
	if m, err := goHDFS(t, p, p.Superuser()).GetXAttrs("/x/f", "user.late"); err != nil || m["user.late"] != "1" {
		t.Fatalf("acknowledged xattr lost by kill -9: %v %v", m, err)
	}
}

func runOK(t *testing.T, p *testcluster.Processes, user string, args ...string) string {
	t.Helper()
	out, errs, code := p.Run(user, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// TestXAttrACLShell checks the shell's -setfattr/-getfattr/-setfacl/
// -getfacl output against Hadoop's formats, the ACLs' effect on access,
// default ACL inheritance, WebHDFS and a restart.
func TestXAttrACLShell(t *testing.T) {
	p := newNameNode(t)
	su := p.Superuser()
	runOK(t, p, su, "dfs", "-mkdir", "-p", "/x")
	runOK(t, p, su, "dfs", "-touchz", "/x/f")
	runOK(t, p, su, "dfs", "-chmod", "640", "/x/f")

	runOK(t, p, su, "dfs", "-setfattr", "-n", "user.tag", "-v", "hello", "/x/f")
	runOK(t, p, su, "dfs", "-setfattr", "-n", "user.empty", "/x/f")
	if got, want := runOK(t, p, su, "dfs", "-getfattr", "-n", "user.tag", "/x/f"), "# file: /x/f\nuser.tag=\"hello\"\n"; got != want {
		t.Errorf("getfattr -n:\n%q\nwant\n%q", got, want)
	}
	if got, want := runOK(t, p, su, "dfs", "-getfattr", "-d", "-e", "hex", "/x/f"), "# file: /x/f\nuser.empty\nuser.tag=0x68656c6c6f\n"; got != want {
		t.Errorf("getfattr -d -e hex:\n%q\nwant\n%q", got, want)
	}
	runOK(t, p, su, "dfs", "-setfattr", "-n", "user.tag", "-v", "0sd29ybGQ=", "/x/f")
	if got, want := runOK(t, p, su, "dfs", "-getfattr", "-R", "-d", "/x"), "# file: /x\n# file: /x/f\nuser.empty\nuser.tag=\"world\"\n"; got != want {
		t.Errorf("getfattr -R -d:\n%q\nwant\n%q", got, want)
	}
	runOK(t, p, su, "dfs", "-setfattr", "-x", "user.tag", "/x/f")
	out, errs, code := p.Run(su, "dfs", "-getfattr", "-n", "user.tag", "/x/f")
	if code != 1 || out != "# file: /x/f\n" || !strings.Contains(errs, "getfattr: At least one of the attributes provided was not found.") {
		t.Errorf("getfattr of a removed xattr: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := p.Run(su, "dfs", "-setfattr", "-n", "bogus.x", "-v", "1", "/x/f"); code != 1 || !strings.Contains(errs, "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'") {
		t.Errorf("setfattr of a bad name: exit %d %s", code, errs)
	}

	// bob has no access (other::---) until an ACL entry names him.
	if _, errs, code := p.Run("bob", "dfs", "-cat", "/x/f"); code != 1 || !strings.Contains(errs, "Permission denied: user=bob, access=READ") {
		t.Fatalf("cat as bob before the ACL: exit %d %s", code, errs)
	}
	runOK(t, p, su, "dfs", "-setfacl", "-m", "user:bob:r-x", "/x/f")
	want := "# file: /x/f\n# owner: " + su + "\n# group: supergroup\nuser::rw-\nuser:bob:r-x\ngroup::r--\nmask::r-x\nother::---\n\n"
	if got := runOK(t, p, su, "dfs", "-getfacl", "/x/f"); got != want {
		t.Errorf("getfacl:\n%s\nwant\n%s", got, want)
	}
	if got := runOK(t, p, su, "dfs", "-ls", "/x"); !strings.Contains(got, "-rw-r-x---+ ") {
		t.Errorf("ls shows no ACL bit:\n%s", got)
	}
	runOK(t, p, "bob", "dfs", "-cat", "/x/f")
	// chmod sets the mask: bob keeps r-x in his entry but r-- takes effect.
	runOK(t, p, su, "dfs", "-chmod", "640", "/x/f")
	if got := runOK(t, p, su, "dfs", "-getfacl", "/x/f"); !strings.Contains(got, "user:bob:r-x\t#effective:r--\ngroup::r--\nmask::r--\n") {
		t.Errorf("getfacl after chmod:\n%s", got)
	}
	runOK(t, p, su, "dfs", "-setfacl", "-x", "user:bob", "/x/f")
	if _, errs, code := p.Run("bob", "dfs", "-cat", "/x/f"); code != 1 || !strings.Contains(errs, "Permission denied") {
		t.Errorf("cat as bob after -x: exit %d %s", code, errs)
	}
	if _, errs, code := p.Run(su, "dfs", "-setfacl", "-m", "mask::r--", "-x", "/x/f"); code != 255 || !strings.Contains(errs, "setfacl") {
		t.Errorf("setfacl with bad args: exit %d %s", code, errs)
	}

	// A default ACL on /x reaches a new directory and a new file.
	runOK(t, p, su, "dfs", "-setfacl", "-m", "default:user:bob:rwx", "/x")
	runOK(t, p, su, "dfs", "-mkdir", "/x/sub")
	want = "# file: /x/sub\n# owner: " + su + "\n# group: supergroup\nuser::rwx\nuser:bob:rwx\ngroup::r-x\nmask::rwx\nother::r-x\n" +
		"default:user::rwx\ndefault:user:bob:rwx\ndefault:group::r-x\ndefault:mask::rwx\ndefault:other::r-x\n\n"
	if got := runOK(t, p, su, "dfs", "-getfacl", "/x/sub"); got != want {
		t.Errorf("getfacl of a new directory:\n%s\nwant\n%s", got, want)
	}
	runOK(t, p, "bob", "dfs", "-touchz", "/x/sub/bobs")
	runOK(t, p, su, "dfs", "-setfacl", "--set", "user::rwx,group::r-x,other::---,group:staff:rwx", "/x/sub")
	runOK(t, p, su, "dfs", "-setfacl", "-k", "/x")

	// WebHDFS answers as Hadoop's.
	get := func(op string) map[string]any {
		t.Helper()
		resp, err := http.Get("http://" + p.NameNodeHTTPAddr() + "/webhdfs/v1" + op)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", op, resp.StatusCode, b)
		}
		return m
	}
	if m := get("/x/f?op=GETXATTRS&xattr.name=user.empty&encoding=text&user.name=" + su); len(m["XAttrs"].([]any)) != 1 {
		t.Errorf("GETXATTRS: %v", m)
	}
	if m := get("/x/f?op=LISTXATTRS&user.name=" + su); m["XAttrNames"] != `["user.empty"]` {
		t.Errorf("LISTXATTRS: %v", m)
	}
	st := get("/x/sub?op=GETACLSTATUS&user.name=" + su)["AclStatus"].(map[string]any)
	if st["permission"] != "770" || len(st["entries"].([]any)) != 7 {
		t.Errorf("GETACLSTATUS: %v", st)
	}

	// Everything survives a restart: image and edits.
	before := runOK(t, p, su, "dfs", "-getfacl", "-R", "/x")
	beforeX := runOK(t, p, su, "dfs", "-getfattr", "-R", "-d", "/x")
	p.RestartNameNode()
	if after := runOK(t, p, su, "dfs", "-getfacl", "-R", "/x"); after != before {
		t.Errorf("getfacl -R after restart:\n%s\nbefore:\n%s", after, before)
	}
	if after := runOK(t, p, su, "dfs", "-getfattr", "-R", "-d", "/x"); after != beforeX {
		t.Errorf("getfattr -R after restart:\n%s\nbefore:\n%s", after, beforeX)
	}
	if !strings.Contains(before, "# file: /x/sub/bobs\n# owner: bob\n") || !strings.Contains(before, "group:staff:rwx") {
		t.Errorf("getfacl -R:\n%s", before)
	}
}
