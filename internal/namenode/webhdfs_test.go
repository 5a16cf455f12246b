package namenode_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/testcluster"
)

// These tests drive WebHDFS with curl, as its users do, and compare the
// answers with the JSON documented for Hadoop's WebHDFS REST API.

type curlResult struct {
	status int
	header http.Header
	body   []byte
}

// curl runs curl with args (-D/-o added) and returns the last response.
func curl(t *testing.T, args ...string) curlResult {
	t.Helper()
	dir := t.TempDir()
	hdr, out := filepath.Join(dir, "headers"), filepath.Join(dir, "body")
	cmd := exec.Command("curl", append([]string{"-sS", "--max-time", "120", "-D", hdr, "-o", out}, args...)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	raw, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	// With -L the header file holds every response; keep the last.
	blocks := strings.Split(strings.TrimSpace(string(raw)), "\r\n\r\n")
	tp := textproto.NewReader(bufio.NewReader(strings.NewReader(blocks[len(blocks)-1] + "\r\n\r\n")))
	line, err := tp.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(line)
	if len(fields) < 2 {
		t.Fatalf("curl: bad status line %q", line)
	}
	status, _ := strconv.Atoi(fields[1])
	h, err := tp.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(out)
	return curlResult{status: status, header: http.Header(h), body: body}
}

// want checks the status and that the body is exactly wantJSON (compared
// as JSON values); wantJSON "" means an empty body.
func (r curlResult) want(t *testing.T, what string, status int, wantJSON string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
		return
	}
	if wantJSON == "" {
		if len(r.body) != 0 {
			t.Errorf("%s: body %q, want none", what, r.body)
		}
		return
	}
	var got, exp any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Errorf("%s: body %q is not JSON: %v", what, r.body, err)
		return
	}
	if err := json.Unmarshal([]byte(wantJSON), &exp); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("%s:\n got %s\nwant %s", what, r.body, wantJSON)
	}
}

// object decodes the body's single top-level object named root.
func (r curlResult) object(t *testing.T, root string) map[string]any {
	t.Helper()
	var m map[string]map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || m[root] == nil {
		t.Fatalf("body %q: want a %s object (%v)", r.body, root, err)
	}
	return m[root]
}

// location decodes a noredirect answer, {"Location": url}.
func (r curlResult) location(t *testing.T) string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 || m["Location"] == "" {
		t.Fatalf("noredirect: %d %s, want 200 {\"Location\": ...}", r.status, r.body)
	}
	return m["Location"]
}

// fileStatusKeys are the members of Hadoop's FileStatus JSON object.
var fileStatusKeys = []string{"accessTime", "blockSize", "childrenNum", "fileId", "group", "length",
	"modificationTime", "owner", "pathSuffix", "permission", "replication", "storagePolicy", "type"}

func checkStatus(t *testing.T, what string, st map[string]any, want map[string]any) {
	t.Helper()
	var keys []string
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, fileStatusKeys) {
		t.Errorf("%s: FileStatus keys %v, want %v", what, keys, fileStatusKeys)
	}
	for k, v := range want {
		if !reflect.DeepEqual(st[k], v) {
			t.Errorf("%s: %s = %#v, want %#v", what, k, st[k], v)
		}
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWebHDFSCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed for the WebHDFS tests (apt-get install curl)")
	}
	c := testcluster.New(t, testcluster.Config{DataNodes: 2, NameNode: func(cfg *namenode.Config) {
		cfg.DefaultReplication = 2
		cfg.ListLimit = 2
	}})
	su := c.Superuser()
	base := "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1"
	u := func(p, query string) string { return base + p + "?user.name=" + su + "&" + query }

	// MKDIRS, GETFILESTATUS of a directory.
	curl(t, "-X", "PUT", u("/w/dir", "op=MKDIRS&permission=750")).want(t, "MKDIRS", 200, `{"boolean":true}`)
	st := curl(t, u("/w/dir", "op=GETFILESTATUS"))
	checkStatus(t, "dir status", st.object(t, "FileStatus"), map[string]any{
		"type": "DIRECTORY", "permission": "750", "owner": su, "group": "supergroup", "pathSuffix": "",
		"length": 0.0, "childrenNum": 0.0, "replication": 0.0, "blockSize": 0.0, "storagePolicy": 0.0,
	})

	// CREATE in two steps: 307 from the NameNode to a DataNode, then the
	// data to the DataNode, answered 201 with the file's URI.
	data := randomBytes(3<<20 + 12345)
	local := writeTemp(t, data)
	step1 := curl(t, "-X", "PUT", u("/w/dir/f", "op=CREATE&blocksize=1048576"))
	loc := step1.header.Get("Location")
	if step1.status != 307 || !strings.Contains(loc, "/webhdfs/v1/w/dir/f?") || !strings.Contains(loc, "op=CREATE") {
		t.Fatalf("CREATE step 1: %d Location %q", step1.status, loc)
	}
	dnHTTP := map[string]bool{}
	for i := 0; i < c.NumDataNodes(); i++ {
		dnHTTP[c.DataNode(i).HTTPAddr()] = true
	}
	if !dnHTTP[strings.Split(strings.TrimPrefix(loc, "http://"), "/")[0]] {
		t.Errorf("CREATE redirects to %s, not a DataNode's HTTP address (%v)", loc, dnHTTP)
	}
	step2 := curl(t, "-X", "PUT", "-T", local, loc)
	step2.want(t, "CREATE step 2", 201, "")
	if got, want := step2.header.Get("Location"), "hdfs://"+c.Addr()+"/w/dir/f"; got != want {
		t.Errorf("CREATE Location %q, want %q", got, want)
	}
	// noredirect answers the DataNode URL as JSON.
	// noredirect answers the DataNode URL as JSON; an empty body makes an
	// empty file.
	nr := curl(t, "-X", "PUT", u("/w/dir/g", "op=CREATE&noredirect=true"))
	if !strings.Contains(string(nr.body), "&op=CREATE&") {
		t.Errorf("noredirect Location is escaped: %s", nr.body)
	}
	gLoc := nr.location(t)
	curl(t, "-X", "PUT", "-T", writeTemp(t, nil), gLoc).want(t, "CREATE empty", 201, "")

	// The file reads back byte-identical through colinmarc/hdfs, and its
	// status is a FILE with the documented defaults.
	gc := goClient(t, c, su)
	if got, err := gc.ReadFile("/w/dir/f"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("colinmarc/hdfs read of a WebHDFS file: %d bytes, err %v; want %d bytes identical", len(got), err, len(data))
	}
	st = curl(t, u("/w/dir/f", "op=GETFILESTATUS"))
	checkStatus(t, "file status", st.object(t, "FileStatus"), map[string]any{
		"type": "FILE", "permission": "644", "owner": su, "length": float64(len(data)),
		"replication": 2.0, "blockSize": 1048576.0, "childrenNum": 0.0, "pathSuffix": "",
	})

	// OPEN: a 307 to a DataNode holding the data, then the bytes; offset
	// and length select a range. -L follows the redirect.
	openLoc := curl(t, u("/w/dir/f", "op=OPEN&offset=2000000&noredirect=true")).location(t)
	if !strings.Contains(openLoc, "op=OPEN") || !strings.Contains(openLoc, "offset=2000000") {
		t.Errorf("OPEN noredirect Location %q", openLoc)
	}
	if got := curl(t, openLoc); !bytes.Equal(got.body, data[2000000:]) {
		t.Errorf("OPEN at the noredirect Location: %d bytes, want %d", len(got.body), len(data)-2000000)
	}
	if got := curl(t, "-L", u("/w/dir/f", "op=OPEN")); got.status != 200 || !bytes.Equal(got.body, data) {
		t.Errorf("OPEN: status %d, %d bytes; want %d identical bytes", got.status, len(got.body), len(data))
	} else if ct := got.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("OPEN Content-Type %q", ct)
	}
	if got := curl(t, "-L", u("/w/dir/f", "op=OPEN&offset=1048000&length=5000")); !bytes.Equal(got.body, data[1048000:1053000]) {
		t.Errorf("OPEN range: %d bytes, want data[1048000:1053000]", len(got.body))
	}
	if got := curl(t, "-L", u("/w/dir/f", "op=OPEN&offset="+strconv.Itoa(len(data)))); got.status != 403 {
		t.Errorf("OPEN past the end: %d %s, want 403", got.status, got.body)
	}

	// APPEND in two steps (POST), 200 with no body.
	extra := randomBytes(70000)
	ap1 := curl(t, "-X", "POST", u("/w/dir/f", "op=APPEND"))
	if ap1.status != 307 {
		t.Fatalf("APPEND step 1: %d %s", ap1.status, ap1.body)
	}
	curl(t, "-X", "POST", "-T", writeTemp(t, extra), ap1.header.Get("Location")).want(t, "APPEND step 2", 200, "")
	data = append(data, extra...)
	if got := curl(t, "-L", u("/w/dir/f", "op=OPEN")); !bytes.Equal(got.body, data) {
		t.Errorf("OPEN after APPEND: %d bytes, want %d", len(got.body), len(data))
	}

	// A file written by colinmarc/hdfs reads back through WebHDFS; a
	// one-step CREATE with -L (curl resends the body on 307) works.
	other := randomBytes(100000)
	w, err := gc.Create("/w/dir/byclient")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(other)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := curl(t, "-L", u("/w/dir/byclient", "op=OPEN")); !bytes.Equal(got.body, other) {
		t.Errorf("WebHDFS read of a colinmarc/hdfs file: %d bytes, want %d identical", len(got.body), len(other))
	}
	curl(t, "-L", "-X", "PUT", "-T", writeTemp(t, []byte("hello, webhdfs\n")), u("/w/dir/small", "op=CREATE&permission=600&replication=1")).
		want(t, "CREATE -L", 201, "")
	if got, err := gc.ReadFile("/w/dir/small"); err != nil || string(got) != "hello, webhdfs\n" {
		t.Errorf("small file: %q %v", got, err)
	}

	// CREATE over an existing file needs overwrite=true.
	exists := curl(t, "-L", "-X", "PUT", "-T", local, u("/w/dir/small", "op=CREATE"))
	if e := exists.object(t, "RemoteException"); exists.status != 403 || e["exception"] != "FileAlreadyExistsException" {
		t.Errorf("CREATE existing: %d %s", exists.status, exists.body)
	}
	curl(t, "-L", "-X", "PUT", "-T", writeTemp(t, []byte("v2")), u("/w/dir/small", "op=CREATE&overwrite=true")).want(t, "CREATE overwrite", 201, "")

	// LISTSTATUS lists everything (across the NameNode's 2-entry pages);
	// LISTSTATUS_BATCH one page at a time.
	ls := curl(t, u("/w/dir", "op=LISTSTATUS"))
	var list struct {
		FileStatuses struct{ FileStatus []map[string]any }
	}
	if err := json.Unmarshal(ls.body, &list); err != nil {
		t.Fatalf("LISTSTATUS: %s", ls.body)
	}
	var names []string
	for _, e := range list.FileStatuses.FileStatus {
		names = append(names, e["pathSuffix"].(string))
		if e["pathSuffix"] == "small" {
			checkStatus(t, "listed small", e, map[string]any{"type": "FILE", "permission": "644", "length": 2.0, "replication": 2.0})
		}
	}
	if want := []string{"byclient", "f", "g", "small"}; !reflect.DeepEqual(names, want) {
		t.Errorf("LISTSTATUS names %v, want %v", names, want)
	}
	batch := curl(t, u("/w/dir", "op=LISTSTATUS_BATCH"))
	var dl struct {
		DirectoryListing struct {
			PartialListing struct {
				FileStatuses struct{ FileStatus []map[string]any }
			} `json:"partialListing"`
			RemainingEntries int `json:"remainingEntries"`
		}
	}
	if err := json.Unmarshal(batch.body, &dl); err != nil || len(dl.DirectoryListing.PartialListing.FileStatuses.FileStatus) != 2 || dl.DirectoryListing.RemainingEntries != 2 {
		t.Errorf("LISTSTATUS_BATCH: %s", batch.body)
	}
	batch = curl(t, u("/w/dir", "op=LISTSTATUS_BATCH&startAfter=f"))
	if err := json.Unmarshal(batch.body, &dl); err != nil || dl.DirectoryListing.RemainingEntries != 0 ||
		len(dl.DirectoryListing.PartialListing.FileStatuses.FileStatus) != 2 || dl.DirectoryListing.PartialListing.FileStatuses.FileStatus[0]["pathSuffix"] != "g" {
		t.Errorf("LISTSTATUS_BATCH startAfter=f: %s", batch.body)
	}
	// LISTSTATUS of a file lists the file itself with an empty suffix.
	lf := curl(t, u("/w/dir/small", "op=LISTSTATUS"))
	if !strings.Contains(string(lf.body), `"pathSuffix":""`) || !strings.Contains(string(lf.body), `"type":"FILE"`) {
		t.Errorf("LISTSTATUS of a file: %s", lf.body)
	}

	// GETCONTENTSUMMARY.
	total := len(data) + len(other) + 2
	curl(t, u("/w", "op=GETCONTENTSUMMARY")).want(t, "GETCONTENTSUMMARY", 200, `{"ContentSummary":{
		"directoryCount":2,"ecPolicy":"","fileCount":4,"length":`+strconv.Itoa(total)+`,"quota":-1,
		"snapshotDirectoryCount":0,"snapshotFileCount":0,"snapshotLength":0,"snapshotSpaceConsumed":0,
		"spaceConsumed":`+strconv.Itoa(2*total)+`,"spaceQuota":-1}}`)

	// GETFILECHECKSUM: 307 to a DataNode, which answers Hadoop's
	// MD5-of-MD5-of-CRC32C; the MD5 matches colinmarc/hdfs's and the whole
	// matches strata's client.
	ck := curl(t, "-L", u("/w/dir/f", "op=GETFILECHECKSUM"))
	fc := ck.object(t, "FileChecksum")
	if ck.status != 200 || fc["algorithm"] != "MD5-of-2048MD5-of-512CRC32C" || fc["length"] != 28.0 {
		t.Errorf("GETFILECHECKSUM: %d %s", ck.status, ck.body)
	}
	raw, _ := hex.DecodeString(fmt.Sprint(fc["bytes"]))
	f, err := gc.Open("/w/dir/f")
	if err != nil {
		t.Fatal(err)
	}
	md5sum, err := f.Checksum()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 8, 0}, md5sum...); !bytes.Equal(raw, want) {
		t.Errorf("checksum bytes %x, want %x", raw, want)
	}
	sc, err := c.Client(su).FileChecksum(context.Background(), "/w/dir/f")
	if err != nil || !bytes.Equal(sc.Bytes, md5sum) {
		t.Errorf("strata checksum %x (%v), colinmarc %x", sc.Bytes, err, md5sum)
	}

	// RENAME, then the old name is a documented 404.
	curl(t, "-X", "PUT", u("/w/dir/small", "op=RENAME&destination=/w/renamed")).want(t, "RENAME", 200, `{"boolean":true}`)
	curl(t, "-X", "PUT", u("/w/nope", "op=RENAME&destination=/w/x")).want(t, "RENAME missing", 200, `{"boolean":false}`)
	curl(t, "-X", "PUT", u("/w/dir/g", "op=RENAME&destination=/w/dir/byclient&renameoptions=OVERWRITE")).want(t, "RENAME OVERWRITE", 200, "")
	if r := curl(t, "-X", "PUT", u("/w/dir/byclient", "op=RENAME&destination=/w/dir/f&renameoptions=NONE")); r.status != 403 ||
		r.object(t, "RemoteException")["exception"] != "FileAlreadyExistsException" {
		t.Errorf("RENAME onto an existing file without OVERWRITE: %d %s", r.status, r.body)
	}
	if got, err := gc.ReadFile("/w/dir/byclient"); err != nil || len(got) != 0 {
		t.Errorf("after RENAME OVERWRITE, byclient holds %d bytes (%v), want the empty g", len(got), err)
	}
	curl(t, u("/w/dir/small", "op=GETFILESTATUS")).want(t, "status of a missing file", 404,
		`{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /w/dir/small"}}`)

	// SETPERMISSION, SETOWNER, SETREPLICATION, SETTIMES.
	curl(t, "-X", "PUT", u("/w/renamed", "op=SETPERMISSION&permission=1640")).want(t, "SETPERMISSION", 200, "")
	curl(t, "-X", "PUT", u("/w/renamed", "op=SETOWNER&owner=bob&group=staff")).want(t, "SETOWNER", 200, "")
	curl(t, "-X", "PUT", u("/w/renamed", "op=SETREPLICATION&replication=1")).want(t, "SETREPLICATION", 200, `{"boolean":true}`)
	curl(t, "-X", "PUT", u("/w/dir", "op=SETREPLICATION&replication=1")).want(t, "SETREPLICATION of a directory", 200, `{"boolean":false}`)
	curl(t, "-X", "PUT", u("/w/renamed", "op=SETTIMES&modificationtime=1320173277227&accesstime=1320171722771")).want(t, "SETTIMES", 200, "")
	checkStatus(t, "after SET*", curl(t, u("/w/renamed", "op=GETFILESTATUS")).object(t, "FileStatus"), map[string]any{
		"permission": "1640", "owner": "bob", "group": "staff", "replication": 1.0,
		"modificationTime": 1320173277227.0, "accessTime": 1320171722771.0,
	})
	curl(t, "-X", "PUT", u("/w/renamed", "op=SETOWNER")).want(t, "SETOWNER without owner and group", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Both owner and group are empty."}}`)

	// Storage policies.
	curl(t, u("/w/dir", "op=GETSTORAGEPOLICY")).want(t, "GETSTORAGEPOLICY default", 200,
		`{"BlockStoragePolicy":{"copyOnCreateFile":false,"creationFallbacks":[],"id":7,"name":"HOT","replicationFallbacks":["ARCHIVE"],"storageTypes":["DISK"]}}`)
	curl(t, "-X", "PUT", u("/w/dir", "op=SETSTORAGEPOLICY&storagepolicy=ALL_SSD")).want(t, "SETSTORAGEPOLICY", 200, "")
	curl(t, u("/w/dir/f", "op=GETSTORAGEPOLICY")).want(t, "GETSTORAGEPOLICY inherited", 200,
		`{"BlockStoragePolicy":{"copyOnCreateFile":false,"creationFallbacks":["DISK"],"id":12,"name":"ALL_SSD","replicationFallbacks":["DISK"],"storageTypes":["SSD"]}}`)
	if got := curl(t, u("/w/dir", "op=GETFILESTATUS")).object(t, "FileStatus")["storagePolicy"]; got != 12.0 {
		t.Errorf("storagePolicy after SETSTORAGEPOLICY: %v", got)
	}
	curl(t, "-X", "PUT", u("/w/dir", "op=SETSTORAGEPOLICY&storagepolicy=NOPE")).want(t, "SETSTORAGEPOLICY unknown", 400,
		`{"RemoteException":{"exception":"HadoopIllegalArgumentException","javaClassName":"org.apache.hadoop.HadoopIllegalArgumentException","message":"Cannot find a block policy with the name NOPE"}}`)
	curl(t, "-X", "POST", u("/w/dir", "op=UNSETSTORAGEPOLICY")).want(t, "UNSETSTORAGEPOLICY", 200, "")

	curl(t, u("/", "op=GETHOMEDIRECTORY")).want(t, "GETHOMEDIRECTORY", 200, `{"Path":"/user/`+su+`"}`)

	// Malformed requests get 400 with a RemoteException.
	curl(t, u("/w", "op=FROB")).want(t, "unknown op", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.FROB"}}`)
	curl(t, u("/w", "op=MKDIRS")).want(t, "PUT op with GET", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.MKDIRS"}}`)
	for _, bad := range []string{"op=MKDIRS&permission=999", "op=MKDIRS&permission=rwx", "op=CREATE&overwrite=maybe", "op=CREATE&blocksize=-1", "op=RENAME&destination=relative"} {
		if got := curl(t, "-X", "PUT", u("/w/bad", bad)); got.status != 400 || got.object(t, "RemoteException")["exception"] != "IllegalArgumentException" {
			t.Errorf("%s: %d %s, want 400 IllegalArgumentException", bad, got.status, got.body)
		}
	}
	if got := curl(t, base+"/w?user.name=b%20d&op=GETFILESTATUS"); got.status != 400 {
		t.Errorf("bad user.name: %d %s", got.status, got.body)
	}
	if got := curl(t, base+"/w"); got.status != 400 {
		t.Errorf("no op: %d %s", got.status, got.body)
	}

	// Permissions are checked as user.name: bob may not write into the
	// superuser's 0755 directory, through the NameNode or a DataNode.
	bob := func(p, query string) string { return base + p + "?user.name=bob&" + query }
	curl(t, "-X", "PUT", u("/w/locked", "op=MKDIRS&permission=755"))
	denied := func(what string, r curlResult) {
		t.Helper()
		if e := r.object(t, "RemoteException"); r.status != 403 || e["exception"] != "AccessControlException" ||
			e["javaClassName"] != "org.apache.hadoop.security.AccessControlException" || !strings.Contains(fmt.Sprint(e["message"]), "Permission denied") {
			t.Errorf("%s as bob: %d %s, want 403 AccessControlException", what, r.status, r.body)
		}
	}
	denied("MKDIRS", curl(t, "-X", "PUT", bob("/w/locked/sub", "op=MKDIRS")))
	denied("CREATE", curl(t, "-L", "-X", "PUT", "-T", writeTemp(t, []byte("x")), bob("/w/locked/file", "op=CREATE")))
	denied("DELETE", curl(t, "-X", "DELETE", bob("/w/dir/f", "op=DELETE")))
	denied("SETPERMISSION", curl(t, "-X", "PUT", bob("/w/dir", "op=SETPERMISSION&permission=777")))
	curl(t, "-L", "-X", "PUT", "-T", writeTemp(t, []byte("secret")), u("/w/secret", "op=CREATE&permission=600")).want(t, "CREATE 600", 201, "")
	denied("OPEN", curl(t, "-L", bob("/w/secret", "op=OPEN")))
	denied("GETFILECHECKSUM", curl(t, "-L", bob("/w/secret", "op=GETFILECHECKSUM")))
	denied("APPEND", curl(t, "-L", "-X", "POST", "-T", writeTemp(t, []byte("more")), bob("/w/secret", "op=APPEND")))
	if _, err := gc.Stat("/w/locked/file"); err == nil {
		t.Error("bob's denied CREATE left a file")
	}
	// Without user.name the request acts as dr.who.
	if r := curl(t, "-X", "PUT", base+"/w/locked/anon?op=MKDIRS"); r.status != 403 || !strings.Contains(string(r.body), "dr.who") {
		t.Errorf("anonymous MKDIRS: %d %s", r.status, r.body)
	}

	// DELETE.
	if r := curl(t, "-X", "DELETE", u("/w/dir", "op=DELETE")); r.status != 403 || r.object(t, "RemoteException")["exception"] != "PathIsNotEmptyDirectoryException" {
		t.Errorf("DELETE non-empty without recursive: %d %s", r.status, r.body)
	}
	curl(t, "-X", "DELETE", u("/w/dir", "op=DELETE&recursive=true")).want(t, "DELETE recursive", 200, `{"boolean":true}`)
	curl(t, "-X", "DELETE", u("/w/dir", "op=DELETE")).want(t, "DELETE missing", 200, `{"boolean":false}`)
}
