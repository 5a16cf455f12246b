package datanode_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/testcluster"
)

// rawRequest sends head and then body on a fresh connection to addr,
// half-closes it (so a body shorter than its Content-Length ends early)
// and returns the response.
func rawRequest(t *testing.T, addr, head string, body []byte) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	conn.Write(body)
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// signed adds to target (a /webhdfs/v1 request URI) the redirect token
// the NameNode would have given it, when the DataNode holds block keys.
func signed(dn *datanode.DataNode, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	op := strings.ToUpper(q.Get("op"))
	mode := blocktoken.Read
	if op == "CREATE" || op == "APPEND" {
		mode = blocktoken.Write
	}
	p := strings.TrimPrefix(u.Path, "/webhdfs/v1")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	tok := datanode.RedirectToken(dn, q.Get("user.name"), op, p, mode)
	if tok == "" {
		return target
	}
	return target + "&" + blocktoken.RedirectParam + "=" + tok
}

func remoteException(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var m map[string]map[string]string
	if err := json.Unmarshal(body, &m); err != nil || m["RemoteException"] == nil {
		t.Fatalf("body %q is not a RemoteException: %v", body, err)
	}
	return m["RemoteException"]
}

// A CREATE or APPEND whose body breaks off must not leave partial data
// behind, and the DataNode keeps serving.
func TestWebHDFSBrokenBody(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	su := c.Superuser()
	dn := c.DataNode(0).HTTPAddr()
	cl := c.Client(su)
	ctx := context.Background()

	head := fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 3000000\r\n\r\n", signed(c.DataNode(0), "/webhdfs/v1/t/partial?op=CREATE&user.name="+su), dn)
	resp, body := rawRequest(t, dn, head, bytes.Repeat([]byte("x"), 1500000))
	if e := remoteException(t, body); resp.StatusCode != 403 || e["javaClassName"] != "java.io.IOException" || !strings.Contains(e["message"], "request body") {
		t.Errorf("short CREATE body: %d %s", resp.StatusCode, body)
	}
	if _, err := cl.Stat(ctx, "/t/partial"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a CREATE whose body broke off left the file: %v", err)
	}

	// APPEND: the file goes back to its old contents.
	w, err := cl.Create(ctx, "/t/appended", fs.CreateOptions{CreateParent: true})
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.Repeat([]byte("0123456789"), 1000)
	w.Write(orig)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	head = fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 3000000\r\n\r\n", signed(c.DataNode(0), "/webhdfs/v1/t/appended?op=APPEND&user.name="+su), dn)
	resp, body = rawRequest(t, dn, head, bytes.Repeat([]byte("y"), 1200000))
	if resp.StatusCode != 403 {
		t.Errorf("short APPEND body: %d %s", resp.StatusCode, body)
	}
	f, err := cl.Open(ctx, "/t/appended")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, orig) {
		t.Errorf("after a broken APPEND: %d bytes (%v), want the original %d", len(got), err, len(orig))
	}

	// A complete request on the same DataNode still works.
	head = fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\n", signed(c.DataNode(0), "/webhdfs/v1/t/whole?op=CREATE&user.name="+su), dn)
	if resp, body := rawRequest(t, dn, head, []byte("hello")); resp.StatusCode != 201 {
		t.Errorf("CREATE after broken ones: %d %s", resp.StatusCode, body)
	}
}

// Malformed requests to a DataNode get 4xx RemoteExceptions.
func TestWebHDFSDataNodeErrors(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	su := c.Superuser()
	w, err := c.Client(su).Create(context.Background(), "/f", fs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("0123456789"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, query string
		status        int
		exception     string
	}{
		{"GET", "/f?op=OPEN&offset=11", 403, "IOException"},
		{"GET", "/f?op=OPEN&offset=-1", 400, "IllegalArgumentException"},
		{"GET", "/f?op=OPEN&length=abc", 400, "IllegalArgumentException"},
		{"GET", "/f?op=OPEN&buffersize=0", 400, "IllegalArgumentException"},
		{"GET", "/missing?op=OPEN", 404, "FileNotFoundException"},
		{"GET", "/f?op=GETFILESTATUS", 400, "IllegalArgumentException"}, // a NameNode op
		{"GET", "/f?op=%zz", 400, "IllegalArgumentException"},
		{"DELETE", "/f?op=DELETE", 400, "IllegalArgumentException"},
		{"PATCH", "/f?op=OPEN", 400, "UnsupportedOperationException"},
		{"PUT", "/g?op=CREATE&replication=0", 400, "IllegalArgumentException"},
		{"PUT", "/f?op=CREATE", 403, "FileAlreadyExistsException"},
		{"POST", "/missing?op=APPEND", 404, "FileNotFoundException"},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+c.DataNode(0).HTTPAddr()+signed(c.DataNode(0), "/webhdfs/v1"+tc.query+"&user.name="+su), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || remoteException(t, body)["exception"] != tc.exception {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.query, resp.StatusCode, body, tc.status, tc.exception)
		}
	}
	// CREATE's Location is the file's hdfs:// URI, escaped.
	req, _ := http.NewRequest("PUT", "http://"+c.DataNode(0).HTTPAddr()+signed(c.DataNode(0), "/webhdfs/v1/a%20b%3F?op=CREATE&user.name="+su), strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "hdfs://" + c.Addr() + "/a%20b%3F"; resp.StatusCode != 201 || resp.Header.Get("Location") != want {
		t.Errorf("CREATE /a b?: %d Location %q, want 201 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// offset == length reads nothing, length caps the range.
	for q, want := range map[string]string{"offset=10": "", "offset=3&length=4": "3456", "length=100": "0123456789"} {
		resp, err := http.Get("http://" + c.DataNode(0).HTTPAddr() + signed(c.DataNode(0), "/webhdfs/v1/f?op=OPEN&user.name="+su+"&"+q))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("OPEN %s: %d %q, want %q", q, resp.StatusCode, body, want)
		}
	}
}
