package tasktracker

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
