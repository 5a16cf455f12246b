package namenode_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

func wantRemote(t *testing.T, what string, err error, class, msg string) {
	t.Helper()
	var re *hdfs.RemoteError
	if !errors.As(err, &re) || re.Class != class || !strings.Contains(re.Message, msg) {
		t.Errorf("%s: %v, want %s %q", what, err, class, msg)
	}
}

// TestXAttrLimitsAndNamespaces checks the NameNode's limits and the rules
// of the security and raw namespaces over RPC.
func TestXAttrLimitsAndNamespaces(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{Conf: map[string]string{
		"dfs.namenode.fs-limits.max-xattrs-per-inode": "2",
		"dfs.namenode.fs-limits.max-xattr-size":       "30",
	}})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	bob := c.Client("bob")
	if err := su.Mkdirs(ctx, "/tmp", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := su.SetPermission(ctx, "/tmp", 0o777); err != nil {
		t.Fatal(err)
	}
	w, err := bob.Create(ctx, "/tmp/f", fs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	both := hdfs.XAttrCreate | hdfs.XAttrReplace
	wantRemote(t, "too big", bob.SetXAttr(ctx, "/tmp/f", "user.abcdefghijklmnopqrstuvwxyz", []byte("12345"), both),
		"org.apache.hadoop.HadoopIllegalArgumentException", "The XAttr is too big. The maximum combined size of the name and value is 30, but the total size is 31")
	for _, n := range []string{"user.a", "user.b"} {
		if err := bob.SetXAttr(ctx, "/tmp/f", n, []byte("1"), both); err != nil {
			t.Fatal(err)
		}
	}
	wantRemote(t, "third xattr", bob.SetXAttr(ctx, "/tmp/f", "user.c", nil, both),
		"java.io.IOException", "Cannot add additional XAttr to inode, would exceed limit of 2")
	wantRemote(t, "CREATE of an existing xattr", bob.SetXAttr(ctx, "/tmp/f", "user.a", nil, hdfs.XAttrCreate),
		"java.io.IOException", "XAttr: a already exists. The REPLACE flag must be specified.")

	// The superuser may not read a file marked unreadable by superuser;
	// its owner may.
	if err := bob.SetXAttr(ctx, "/tmp/f", "security.hdfs.unreadable.by.superuser", nil, hdfs.XAttrCreate); err != nil {
		t.Fatal(err)
	}
	_, err = su.Open(ctx, "/tmp/f")
	wantRemote(t, "superuser open", err, "org.apache.hadoop.security.AccessControlException", "since the superuser is not allowed to perform this operation")
	if r, err := bob.Open(ctx, "/tmp/f"); err != nil {
		t.Errorf("owner open: %v", err)
	} else {
		r.Close()
	}
	wantRemote(t, "removing the unreadable xattr", bob.RemoveXAttr(ctx, "/tmp/f", "security.hdfs.unreadable.by.superuser"),
		"org.apache.hadoop.security.AccessControlException", "can not be deleted")

	// raw.* only through /.reserved/raw, only for the superuser.
	if err := bob.SetXAttr(ctx, "/.reserved/raw/tmp/f", "raw.x", nil, both); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob on /.reserved/raw: %v", err)
	}
	wantRemote(t, "raw.* outside /.reserved/raw", su.SetXAttr(ctx, "/tmp/f", "raw.x", nil, both),
		"org.apache.hadoop.security.AccessControlException", "User doesn't have permission for xattr: raw.x")
	if err := su.SetXAttr(ctx, "/.reserved/raw/tmp/f", "raw.x", []byte("r"), both); err != nil {
		t.Fatal(err)
	}
	names, err := su.ListXAttrs(ctx, "/tmp/f")
	if err != nil || strings.Join(names, " ") != "user.a user.b security.hdfs.unreadable.by.superuser" {
		t.Errorf("list outside raw: %v %v", names, err)
	}
	m, err := su.GetXAttrs(ctx, "/.reserved/raw/tmp/f", "raw.x")
	if err != nil || string(m["raw.x"]) != "r" {
		t.Errorf("raw.x through /.reserved/raw: %v %v", m, err)
	}
}

func TestXAttrACLSwitches(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{Conf: map[string]string{
		"dfs.namenode.xattrs.enabled": "false",
		"dfs.namenode.acls.enabled":   "false",
	}})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	wantRemote(t, "xattrs disabled", su.SetXAttr(ctx, "/", "user.a", nil, hdfs.XAttrCreate), "java.io.IOException",
		"The XAttr operation has been rejected.  Support for XAttrs has been disabled by setting dfs.namenode.xattrs.enabled to false.")
	_, err := su.GetACLStatus(ctx, "/")
	wantRemote(t, "acls disabled", err, "org.apache.hadoop.hdfs.protocol.AclException",
		"The ACL operation has been rejected.  Support for ACLs has been disabled by setting dfs.namenode.acls.enabled to false.")
}

// TestACLOwnerOnly: only the owner changes an ACL; the checker applies it
// at once and it survives a restart.
func TestACLOwnerOnly(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	bob := c.Client("bob")
	if err := su.Mkdirs(ctx, "/d", 0o700); err != nil {
		t.Fatal(err)
	}
	spec, err := hdfs.ParseACLSpec("user:bob:r-x", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.ModifyACLEntries(ctx, "/d", spec); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob changes root's ACL: %v", err)
	}
	if _, err := bob.List(ctx, "/d"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("bob lists /d before the ACL: %v", err)
	}
	if err := su.ModifyACLEntries(ctx, "/d", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.List(ctx, "/d"); err != nil {
		t.Errorf("bob lists /d with user:bob:r-x: %v", err)
	}
	if err := bob.Mkdirs(ctx, "/d/x", 0o755); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob writes /d with r-x: %v", err)
	}
	c.RestartNameNode()
	bob = c.Client("bob")
	st, err := bob.GetACLStatus(ctx, "/d")
	if err != nil || len(st.Entries) != 2 || st.Entries[0].String() != "user:bob:r-x" || st.Perm != 0o750 {
		t.Fatalf("after restart: %+v %v", st, err)
	}
	if fi, err := bob.Stat(ctx, "/d"); err != nil || !fi.HasACL {
		t.Errorf("stat after restart: %+v %v", fi, err)
	}
	if err := su.RemoveACL(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if st, err := su.GetACLStatus(ctx, "/d"); err != nil || len(st.Entries) != 0 || st.Perm != 0o700 {
		t.Errorf("after removeAcl: %+v %v", st, err)
	}
}

// TestWebHDFSXAttrsACLs drives the WebHDFS ops with curl and compares
// their JSON with Hadoop's.
func TestWebHDFSXAttrsACLs(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	su := c.Superuser()
	base := "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1"
	q := "&user.name=" + su
	put := func(path, op string) curlResult { t.Helper(); return curl(t, "-X", "PUT", base+path+"?op="+op+q) }
	get := func(path, op string) curlResult { t.Helper(); return curl(t, base+path+"?op="+op+q) }

	put("/d", "MKDIRS&permission=750").want(t, "mkdirs", 200, `{"boolean":true}`)
	put("/d", "SETXATTR&xattr.name=user.a&xattr.value=0x6869&flag=CREATE").want(t, "setxattr", 200, "")
	put("/d", "SETXATTR&xattr.name=user.b&flag=CREATE").want(t, "setxattr without a value", 200, "")
	put("/d", "SETXATTR&xattr.name=user.a&xattr.value=x&flag=CREATE").want(t, "setxattr CREATE of an existing one", 403,
		`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"XAttr: a already exists. The REPLACE flag must be specified."}}`)
	get("/d", "GETXATTRS&xattr.name=user.a&xattr.name=user.b&encoding=text").want(t, "getxattrs", 200,
		`{"XAttrs":[{"name":"user.a","value":"\"hi\""},{"name":"user.b","value":null}]}`)
	get("/d", "GETXATTRS&encoding=base64").want(t, "getxattrs all", 200,
		`{"XAttrs":[{"name":"user.a","value":"0saGk="},{"name":"user.b","value":null}]}`)
	get("/d", "GETXATTRS").want(t, "getxattrs without an encoding", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Required param encoding for op: GETXATTRS is null or empty"}}`)
	get("/d", "LISTXATTRS").want(t, "listxattrs", 200, `{"XAttrNames":"[\"user.a\",\"user.b\"]"}`)
	put("/d", "REMOVEXATTR&xattr.name=user.b").want(t, "removexattr", 200, "")
	get("/d", "GETXATTRS&xattr.name=user.b&encoding=text").want(t, "getxattrs of a removed one", 403,
		`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"At least one of the attributes provided was not found."}}`)

	put("/d", "MODIFYACLENTRIES&aclspec=user:bob:rwx,default:group:staff:r-x").want(t, "modifyaclentries", 200, "")
	get("/d", "GETACLSTATUS").want(t, "getaclstatus", 200, `{"AclStatus":{"entries":["user:bob:rwx","group::r-x",`+
		`"default:user::rwx","default:group::r-x","default:group:staff:r-x","default:mask::r-x","default:other::---"],`+
		`"group":"supergroup","owner":"`+su+`","permission":"770","stickyBit":false}}`)
	if st := get("/d", "GETFILESTATUS").object(t, "FileStatus"); st["aclBit"] != true {
		t.Errorf("FileStatus without aclBit: %v", st)
	}
	put("/d", "REMOVEACLENTRIES&aclspec=user:bob").want(t, "removeaclentries", 200, "")
	put("/d", "REMOVEDEFAULTACL").want(t, "removedefaultacl", 200, "")
	get("/d", "GETACLSTATUS").want(t, "getaclstatus after removals", 200,
		`{"AclStatus":{"entries":[],"group":"supergroup","owner":"`+su+`","permission":"750","stickyBit":false}}`)
	put("/d", "SETACL&aclspec=user::rwx,group::r--,other::---,group:staff:rw-").want(t, "setacl", 200, "")
	put("/d", "REMOVEACL").want(t, "removeacl", 200, "")
	get("/d", "GETACLSTATUS").want(t, "getaclstatus after removeacl", 200,
		`{"AclStatus":{"entries":[],"group":"supergroup","owner":"`+su+`","permission":"740","stickyBit":false}}`)
	if st := get("/d", "GETFILESTATUS").object(t, "FileStatus"); st["aclBit"] != nil {
		t.Errorf("FileStatus keeps aclBit after removeacl: %v", st)
	}
	put("/d", "SETACL&aclspec=user:bob").want(t, "setacl without permissions", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"aclspec\": Invalid <aclSpec> : user:bob"}}`)
}

// TestXAttrACLFailover: the standbys apply the same records, so a new
// active serves the xattrs, ACLs and inherited ACLs the old one made.
func TestXAttrACLFailover(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNodes: 3})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := su.SetXAttr(ctx, "/d", "user.k", []byte("v"), hdfs.XAttrCreate); err != nil {
		t.Fatal(err)
	}
	spec, _ := hdfs.ParseACLSpec("default:user:bob:rwx", true)
	if err := su.ModifyACLEntries(ctx, "/d", spec); err != nil {
		t.Fatal(err)
	}
	if err := su.Mkdirs(ctx, "/d/sub", 0o777); err != nil { // unmasked 777: the default ACL, not the umask, decides
		t.Fatal(err)
	}
	before, err := su.GetACLStatus(ctx, "/d/sub")
	if err != nil {
		t.Fatal(err)
	}
	c.StopNameNodeAt(c.ActiveNameNode())
	su = c.Client(c.Superuser())
	m, err := su.GetXAttrs(ctx, "/d", "user.k")
	if err != nil || string(m["user.k"]) != "v" {
		t.Fatalf("xattr after failover: %v %v", m, err)
	}
	after, err := su.GetACLStatus(ctx, "/d/sub")
	if err != nil || len(after.Entries) != len(before.Entries) || after.Perm != before.Perm || len(after.Entries) != 7 {
		t.Fatalf("inherited ACL after failover: %+v, before %+v (%v)", after, before, err)
	}
	bob := c.Client("bob")
	if err := bob.Mkdirs(ctx, "/d/sub/bobs", 0o755); err != nil {
		t.Errorf("bob, named in the inherited ACL, after failover: %v", err)
	}
}

// TestACLInheritanceModes: under a default ACL a new directory takes the
// client's unmasked permission (mask rwx from 777), unless
// dfs.namenode.posix.acl.inheritance.enabled is false (the umask's 755
// then filters the mask to r-x).
func TestACLInheritanceModes(t *testing.T) {
	for _, tc := range []struct {
		inherit string
		mode    uint16
	}{{"true", 0o775}, {"false", 0o755}} {
		c := testcluster.New(t, testcluster.Config{Conf: map[string]string{"dfs.namenode.posix.acl.inheritance.enabled": tc.inherit}})
		ctx := context.Background()
		su := c.Client(c.Superuser())
		if err := su.Mkdirs(ctx, "/d", 0o755); err != nil {
			t.Fatal(err)
		}
		spec, _ := hdfs.ParseACLSpec("default:group:staff:rwx", true)
		if err := su.ModifyACLEntries(ctx, "/d", spec); err != nil {
			t.Fatal(err)
		}
		if err := su.Mkdirs(ctx, "/d/sub", 0o777); err != nil {
			t.Fatal(err)
		}
		st, err := su.GetACLStatus(ctx, "/d/sub")
		if err != nil || st.Perm != tc.mode {
			t.Errorf("inheritance %s: %+v %v, want mode %o", tc.inherit, st, err, tc.mode)
		}
	}
}

// TestACLLimitsOverRPC: the entry limit is per scope and entry names are
// bounded, over RPC and WebHDFS; a child of a directory with a full
// default ACL stays changeable.
func TestACLLimitsOverRPC(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/d", 0o750); err != nil {
		t.Fatal(err)
	}
	var users []string
	for i := 0; i < 28; i++ {
		users = append(users, fmt.Sprintf("default:user:u%d:r-x", i))
	}
	spec, err := hdfs.ParseACLSpec(strings.Join(users, ","), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := su.ModifyACLEntries(ctx, "/d", spec); err != nil {
		t.Fatalf("32 default entries: %v", err)
	}
	if err := su.Mkdirs(ctx, "/d/c", 0o750); err != nil {
		t.Fatal(err)
	}
	more, _ := hdfs.ParseACLSpec("user:u0:rwx,default:user:u0:rwx", true)
	if err := su.ModifyACLEntries(ctx, "/d/c", more); err != nil {
		t.Fatalf("changing the child of a full default ACL: %v", err)
	}
	gone, _ := hdfs.ParseACLSpec("user:u1", false)
	if err := su.RemoveACLEntries(ctx, "/d/c", gone); err != nil {
		t.Fatalf("removing from the child: %v", err)
	}
	over, _ := hdfs.ParseACLSpec("default:user:x:r--", true)
	wantRemote(t, "33 default entries", su.ModifyACLEntries(ctx, "/d", over),
		"org.apache.hadoop.hdfs.protocol.AclException", "Invalid ACL: ACL has 33 default entries, which exceeds maximum of 32.")
	var many []string
	for i := 0; i < 33; i++ {
		many = append(many, fmt.Sprintf("user:v%d:r--", i))
	}
	spec, _ = hdfs.ParseACLSpec(strings.Join(many, ","), true)
	wantRemote(t, "33 access entries in the spec", su.ModifyACLEntries(ctx, "/d", spec),
		"org.apache.hadoop.hdfs.protocol.AclException", "Invalid ACL: ACL has 33 access entries, which exceeds maximum of 32.")

	long := strings.Repeat("n", 256)
	spec, _ = hdfs.ParseACLSpec("default:user:"+long+":r-x", true)
	wantRemote(t, "256-byte name", su.ModifyACLEntries(ctx, "/d/c", spec),
		"org.apache.hadoop.hdfs.protocol.AclException", "Invalid ACL: the name of a user entry has 256 bytes, which exceeds maximum of 255.")
	spec, _ = hdfs.ParseACLSpec("group:"+long[1:]+":r-x", true)
	if err := su.ModifyACLEntries(ctx, "/d/c", spec); err != nil {
		t.Errorf("255-byte name: %v", err)
	}
	base := "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1"
	curl(t, "-X", "PUT", base+"/d?op=MODIFYACLENTRIES&aclspec=group:"+long+":r--&user.name="+c.Superuser()).want(t, "webhdfs 256-byte name", 403,
		`{"RemoteException":{"exception":"AclException","javaClassName":"org.apache.hadoop.hdfs.protocol.AclException","message":"Invalid ACL: the name of a group entry has 256 bytes, which exceeds maximum of 255."}}`)
	st, err := su.GetACLStatus(ctx, "/d")
	if err != nil || len(st.Entries) != 32 {
		t.Errorf("/d after the refusals: %d entries, %v", len(st.Entries), err)
	}
}

// TestACLPermissionBit: as Hadoop 3, an inode with an ACL has the HAS_ACL
// flag and FsPermissionExtension's bit 1<<12 in its permission; clients
// mask the bit off.
func TestACLPermissionBit(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	ctx := context.Background()
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/d/plain", 0o750); err != nil {
		t.Fatal(err)
	}
	spec, _ := hdfs.ParseACLSpec("user:bob:r-x", true)
	if err := su.ModifyACLEntries(ctx, "/d", spec); err != nil {
		t.Fatal(err)
	}
	if err := su.SetPermission(ctx, "/d", 0o1750); err != nil {
		t.Fatal(err)
	}
	g := goClient(t, c, c.Superuser())
	for _, tc := range []struct {
		path string
		raw  uint32
	}{{"/d", 1<<12 | 0o1750}, {"/d/plain", 0o750}} {
		fi, err := g.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		// Sys is colinmarc's internal HdfsFileStatusProto.
		perm := reflect.ValueOf(fi.Sys()).MethodByName("GetPermission").Call(nil)[0]
		if got := uint32(perm.MethodByName("GetPerm").Call(nil)[0].Uint()); got != tc.raw {
			t.Errorf("%s: wire permission %#o, want %#o", tc.path, got, tc.raw)
		}
		if fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: go client's mode %v", tc.path, fi.Mode())
		}
		st, err := su.Stat(ctx, tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if want := uint16(tc.raw & 0o7777); st.Perm != want || st.HasACL != (tc.path == "/d") {
			t.Errorf("%s: strata client's perm %#o HasACL %v, want %#o", tc.path, st.Perm, st.HasACL, want)
		}
	}
	ls, err := su.List(ctx, "/")
	if err != nil || len(ls) != 1 || ls[0].Perm != 0o1750 || !ls[0].HasACL {
		t.Errorf("listing: %+v %v", ls, err)
	}
}
