package webui

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/httpauth"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1536: "1.50 KB", 1623319044096: "1.48 TB", -2048: "-2.00 KB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{350 * time.Millisecond: "350 ms", 12300 * time.Millisecond: "12.3 s",
		245 * time.Second: "4m 05s", 123 * time.Minute: "2h 03m", 76 * time.Hour: "3d 04h"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPermission(t *testing.T) {
	for _, c := range []struct {
		dir  bool
		mode uint16
		want string
	}{{true, 0o755, "drwxr-xr-x"}, {false, 0o644, "-rw-r--r--"}, {true, 0o1777, "drwxrwxrwt"}, {true, 0o1770, "drwxrwx--T"}} {
		if got := Permission(c.dir, c.mode); got != c.want {
			t.Errorf("Permission(%v, %o) = %q, want %q", c.dir, c.mode, got, c.want)
		}
	}
}

func TestBar(t *testing.T) {
	if got := string(Bar(95, 100)); !strings.Contains(got, "bar full") || !strings.Contains(got, "95.0%") {
		t.Errorf("Bar(95, 100) = %s", got)
	}
	if got := string(Bar(5, 0)); !strings.Contains(got, "width:0.0%") {
		t.Errorf("Bar(5, 0) = %s", got)
	}
}

func TestUsage(t *testing.T) {
	got := string(Usage(10, 40, 100)) // 10 DFS, 50 other, 40 remaining
	if !strings.Contains(got, "width:10.0%") || !strings.Contains(got, "width:50.0%") || !strings.Contains(got, "10.0% DFS, 60.0% used") {
		t.Errorf("Usage(10, 40, 100) = %s", got)
	}
	if got := string(Usage(95, 0, 100)); !strings.Contains(got, "full") {
		t.Errorf("Usage(95, 0, 100) = %s", got)
	}
}

func TestJMXQuery(t *testing.T) {
	beans := []Bean{{"name": "Hadoop:service=NameNode,name=FSNamesystem", "CapacityTotal": 5}, {"name": "java.lang:type=Memory"}}
	w := httptest.NewRecorder()
	ServeJMX(w, httptest.NewRequest("GET", "/jmx?qry=Hadoop:service=NameNode,name=*", nil), beans)
	if !strings.Contains(w.Body.String(), "FSNamesystem") || strings.Contains(w.Body.String(), "Memory") {
		t.Errorf("qry: %s", w.Body)
	}
	w = httptest.NewRecorder()
	ServeJMX(w, httptest.NewRequest("GET", "/jmx?get=Hadoop:service=NameNode,name=FSNamesystem::CapacityTotal", nil), beans)
	if !strings.Contains(w.Body.String(), `"CapacityTotal": 5`) {
		t.Errorf("get: %s", w.Body)
	}
}

func TestRecentErrors(t *testing.T) {
	e := NewRecentErrors(2)
	log := slog.New(e.Wrap(slog.NewTextHandler(&strings.Builder{}, nil))).With("daemon", "dn")
	log.Info("fine")
	log.Warn("one", "k", 1)
	log.Error("two")
	log.Error("three")
	got := e.Entries()
	if len(got) != 2 || got[0].Message != "three" || got[1].Message != "two" {
		t.Fatalf("entries: %+v", got)
	}
	if !strings.Contains(got[0].Attrs, "daemon=dn") {
		t.Errorf("attrs: %q", got[0].Attrs)
	}
}

func TestRender(t *testing.T) {
	tm := Parse(`{{define "content"}}<p>{{.}} {{bytes 2048}}</p>{{end}}`, nil)
	w := httptest.NewRecorder()
	Render(w, tm, Page{Daemon: "Test", Title: "T", Nav: []Link{{"Home", "/"}}, Active: "/", Data: "<x>"})
	body := w.Body.String()
	if !strings.Contains(body, "&lt;x&gt; 2.00 KB") || !strings.Contains(body, `class="active"`) {
		t.Errorf("render: %s", body)
	}
}

// TestStacksBounded: a dump is cut at its limit with a note, and a second
// request within stacksInterval is refused 429 until the interval passes.
func TestStacksBounded(t *testing.T) {
	if b := dumpStacks(512); len(b) > 600 || !strings.Contains(string(b), "cut at 512 bytes") {
		t.Errorf("dump of 512 bytes: %d bytes %q", len(b), b)
	}
	now := time.Unix(1000, 0)
	s := &Stacks{now: func() time.Time { return now }}
	get := func() int {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/stacks", nil))
		return rec.Code
	}
	if c := get(); c != 200 {
		t.Fatalf("first dump: %d", c)
	}
	if c := get(); c != http.StatusTooManyRequests {
		t.Errorf("second dump at once: %d, want 429", c)
	}
	now = now.Add(stacksInterval)
	if c := get(); c != 200 {
		t.Errorf("dump after the interval: %d", c)
	}
}

// TestRemoteUserAuthenticated: a request the authentication filter
// authenticated is its user, whatever user.name or the cookie say.
func TestRemoteUserAuthenticated(t *testing.T) {
	r := httptest.NewRequest("GET", "/?user.name=hdfs", nil)
	r.AddCookie(&http.Cookie{Name: userCookie, Value: "root"})
	if u := RemoteUser(httptest.NewRecorder(), r); u != "hdfs" {
		t.Fatalf("simple: %q", u)
	}
	if u := ParamUser(r); u != "hdfs" {
		t.Fatalf("ParamUser simple: %q", u)
	}
	r = r.WithContext(httpauth.WithIdentity(r.Context(), httpauth.Identity{User: "alice", Principal: "alice@R", Type: httpauth.TypeKerberos}))
	w := httptest.NewRecorder()
	if u := RemoteUser(w, r); u != "alice" || w.Header().Get("Set-Cookie") != "" {
		t.Fatalf("authenticated: %q %v", u, w.Header())
	}
	if u := ParamUser(r); u != "alice" {
		t.Fatalf("ParamUser authenticated: %q", u)
	}
}
