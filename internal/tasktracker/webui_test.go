package tasktracker

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
)

// TestTaskLog: /tasklog shows an attempt's stderr from its job's userlogs
// directory and refuses anything that is not an attempt id.
func TestTaskLog(t *testing.T) {
	dir := t.TempDir()
	tt := &TaskTracker{cfg: Config{LocalDirs: []string{dir}, MapSlots: 2, ReduceSlots: 1}, running: map[string]*attempt{}, freeMaps: 2, freeReduce: 1,
		shuffle: shuffle.NewServer(shuffle.ServerConfig{}), name: "tracker_h:1"}
	id := "attempt_1796135004420_0001_m_000003_0"
	logDir := filepath.Join(dir, "userlogs", "job_1796135004420_0001")
	os.MkdirAll(logDir, 0o755)
	os.WriteFile(filepath.Join(logDir, id+".stderr"), []byte("panic: <boom>\n"), 0o644)
	mux := http.NewServeMux()
	tt.registerUI(mux)
	get := func(u string) (int, string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", u, nil))
		return w.Code, w.Body.String()
	}
	if code, body := get("/tasklog?attemptid=" + id + "&filter=stderr"); code != 200 || !strings.Contains(body, "panic: &lt;boom&gt;") {
		t.Errorf("tasklog: %d\n%s", code, body)
	}
	if code, body := get("/tasklog?attemptid=" + id + "&plaintext=true"); code != 200 || body != "panic: <boom>\n" {
		t.Errorf("plain tasklog: %d %q", code, body)
	}
	for _, bad := range []string{"../../etc/passwd", "attempt_1_2_m_3_4/../../x", "attempt_1_2_x_3_4"} {
		if code, _ := get("/tasklog?attemptid=" + bad); code != http.StatusBadRequest {
			t.Errorf("tasklog of %q: %d, want 400", bad, code)
		}
	}
	if code, _ := get("/tasklog?attemptid=attempt_1_2_r_000000_0"); code != http.StatusNotFound {
		t.Errorf("tasklog of an unknown attempt: %d, want 404", code)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `<td id="mapslots">0 of 2 in use</td>`) {
		t.Errorf("tasktracker page: %d\n%s", code, body)
	}
}

// TestTaskLogACLs: with ACLs on, an attempt's log is its job's owner's,
// the administrators', the TaskTracker's and mapreduce.job.acl-view-job's;
// a request without user.name is dr.who's.
func TestTaskLogACLs(t *testing.T) {
	dir := t.TempDir()
	tt := &TaskTracker{cfg: Config{LocalDirs: []string{dir}, ACLsEnabled: true, User: "mapred", Admins: jobtracker.ParseACL("root"),
		Groups: func(string) []string { return nil }}, running: map[string]*attempt{}, shuffle: shuffle.NewServer(shuffle.ServerConfig{}), name: "tracker_h:1"}
	id := "attempt_1796135004420_0001_m_000003_0"
	logDir := filepath.Join(dir, "userlogs", "job_1796135004420_0001")
	os.MkdirAll(logDir, 0o755)
	os.WriteFile(filepath.Join(logDir, id+".stderr"), []byte("secret stderr\n"), 0o644)
	if err := writeJobACLs(logDir, &mrpb.TaskSpec{User: proto.String("alice"), Conf: map[string]string{"mapreduce.job.acl-view-job": "viewer"}}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	tt.registerUI(mux)
	for user, want := range map[string]int{"alice": 200, "viewer": 200, "root": 200, "mapred": 200, "mallory": http.StatusUnauthorized, "": http.StatusUnauthorized} {
		w := httptest.NewRecorder()
		u := "/tasklog?attemptid=" + id
		if user != "" {
			u += "&user.name=" + user
		}
		mux.ServeHTTP(w, httptest.NewRequest("GET", u, nil))
		if w.Code != want || (want != 200) == strings.Contains(w.Body.String(), "secret stderr") {
			t.Errorf("tasklog as %q: %d, want %d\n%s", user, w.Code, want, w.Body)
		}
	}
	// Secure mode with simple HTTP authentication: user.name naming the
	// owner or an admin is not trusted; the request is dr.who's.
	c := conf.New()
	c.Set(httpauth.KeySecurityAuthentication, "kerberos")
	c.Set(keyJobTracker, "localhost:1")
	cfg, err := ConfigFrom(c)
	if err != nil || !cfg.HTTPAuth.Secure {
		t.Fatalf("ConfigFrom in secure mode: %+v %v", cfg.HTTPAuth, err)
	}
	auth, err := httpauth.New(cfg.HTTPAuth)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"alice", "root"} {
		w := httptest.NewRecorder()
		auth.Wrap(mux).ServeHTTP(w, httptest.NewRequest("GET", "/tasklog?attemptid="+id+"&user.name="+user, nil))
		if w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), "secret stderr") {
			t.Errorf("secure, simple HTTP: tasklog with user.name=%s: %d\n%s", user, w.Code, w.Body)
		}
	}
}
