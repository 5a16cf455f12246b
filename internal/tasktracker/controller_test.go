package tasktracker

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
)

// TestCredential: the default controller runs attempts as the tracker's
// user; the Linux one as the job's user, refusing an unknown user and one
// below MinUserID (root).
func TestCredential(t *testing.T) {
	tt, _ := newTracker(t)
	if c, err := tt.credential("root"); c != nil || err != nil {
		t.Fatalf("default controller: %v, %v", c, err)
	}
	tt.cfg.TaskController = LinuxTaskController
	if _, err := tt.credential("no-such-user-xyz"); err == nil || !strings.Contains(err.Error(), `cannot run the task as user "no-such-user-xyz"`) {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err := tt.credential("root"); err == nil || !strings.Contains(err.Error(), "below the minimum allowed 1000") {
		t.Fatalf("root: %v", err)
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	c, err := tt.credential("nobody")
	if err != nil || c == nil || u.Uid != itoa(c.Uid) || u.Gid != itoa(c.Gid) {
		t.Fatalf("nobody: %+v, %v; want uid %s gid %s", c, err, u.Uid, u.Gid)
	}
	if os.Geteuid() == 0 {
		d := t.TempDir()
		if err := chown(d, c); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(d); err != nil || itoa(statUID(st)) != u.Uid {
			t.Fatalf("chown: %v", err)
		}
	}
}

// TestLaunchSetsSecret: a launch's job token is what the shuffle server
// checks the job's requests with, until the job is done.
func TestLaunchSetsSecret(t *testing.T) {
	tt, f := newTracker(t)
	const job, att = "job_1_0001", "attempt_1_0001_m_000000_0"
	tt.apply(&mrpb.HeartbeatResponse{Launch: []*mrpb.LaunchTask{launch(job, att, mrpb.TaskType_MAP)}})
	<-f.started
	if got := tt.shuffle.SetSecret(job, nil); got == nil {
		t.Fatal("an empty secret was accepted")
	}
	// The server has the secret: a request it signs is looked up (404:
	// no output yet), one it does not is refused (401).
	if code := headStatus(tt, job, att, testSecret); code != 404 {
		t.Fatalf("signed request: %d", code)
	}
	if code := headStatus(tt, job, att, []byte("other")); code != 401 {
		t.Fatalf("request signed with another secret: %d", code)
	}
	tt.apply(&mrpb.HeartbeatResponse{DoneJobs: []string{job}})
	if code := headStatus(tt, job, att, testSecret); code != 401 {
		t.Fatalf("after the job is done: %d", code)
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func statUID(st os.FileInfo) uint32 { return st.Sys().(*syscall.Stat_t).Uid }

func headStatus(tt *TaskTracker, job, att string, secret []byte) int {
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodHead, shuffle.Path+"?job="+job+"&map="+att+"&reduce=0", nil)
	req.Header.Set(jobtoken.HeaderURLHash, jobtoken.URLHash(secret, req.URL))
	tt.shuffle.ServeHTTP(w, req)
	return w.Code
}
