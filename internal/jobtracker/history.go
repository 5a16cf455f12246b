package jobtracker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// History is a finished job's record, written by the JobTracker as
// <mapreduce.jobhistory.done-dir>/<job id>.json — its own setting, on its
// own default file system, as its own user (Config.HistoryDir), never a
// place a job's configuration names — so that it outlives the JobTracker
// (docs/format/mapred-protocol.md).
type History struct {
	JobID string `json:"jobId"`
	Name  string `json:"name"`
	User  string `json:"user"`
	// ViewACL is the job's mapreduce.job.acl-view-job.
	ViewACL  string                      `json:"viewAcl,omitempty"`
	State    string                      `json:"state"`
	Error    string                      `json:"error,omitempty"`
	Submit   time.Time                   `json:"submitTime"`
	Finish   time.Time                   `json:"finishTime"`
	Counters map[string]map[string]int64 `json:"counters"`
	Tasks    []TaskHistory               `json:"tasks"`
	// Attempts are every attempt launched, in launch order.
	Attempts []AttemptHistory `json:"attempts,omitempty"`
}

// TaskHistory is one task's line of a History.
type TaskHistory struct {
	Task      string `json:"task"` // e.g. m_000003
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	Failures  int    `json:"failures"`
	Tracker   string `json:"tracker,omitempty"`
	LastError string `json:"lastError,omitempty"`
}

// maxHistory bounds a history file a reader accepts.
const maxHistory = 64 << 20

// historyPath is where a job's history lives under the done dir.
func historyPath(dir, jobID string) string {
	return strings.TrimSuffix(dir, "/") + "/" + jobID + ".json"
}

// history snapshots j. Lock held.
func (jt *JobTracker) history(j *job) *History {
	h := &History{JobID: j.id, Name: j.name, User: j.user, ViewACL: j.view.String(), State: j.state.String(), Error: j.err, Submit: j.start, Finish: j.finish,
		Counters: j.counters.Map()}
	for _, t := range append(append([]*task{}, j.maps...), j.reduces...) {
		typ := 'r'
		if t.isMap {
			typ = 'm'
		}
		// The history file's task states are strings (Hadoop's names),
		// whatever the protocol's enums are.
		st := map[taskState]string{pending: "PENDING", running: "RUNNING", done: "SUCCEEDED"}[t.state]
		if j.state != mrpb.JobState_SUCCEEDED && t.state != done {
			st = "KILLED"
			if t.failures > 0 {
				st = "FAILED"
			}
		}
		h.Tasks = append(h.Tasks, TaskHistory{Task: fmt.Sprintf("%c_%06d", typ, t.index), State: st, Attempts: t.attempts,
			Failures: t.failures, Tracker: t.tracker, LastError: t.lastError})
	}
	for _, r := range j.attemptReports() {
		h.Attempts = append(h.Attempts, attemptHistory(r))
	}
	return h
}

// rewriteHistory writes j's history again once its abort ended, now with
// the cleanup attempts, after the one written as it ended. Lock held.
func (jt *JobTracker) rewriteHistory(j *job) {
	h, first := jt.history(j), j.historyWritten
	jt.goBackground(func() {
		if first != nil {
			<-first
		}
		jt.writeHistory(h)
	})
}

// writeHistory stores h under the JobTracker's history dir, as the
// JobTracker's user; a failure is logged, not fatal to anything. Without a
// history dir it does nothing.
func (jt *JobTracker) writeHistory(h *History) {
	if jt.cfg.HistoryDir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := jt.cfg.HistoryConf
	if c == nil {
		c = conf.New()
	}
	p := historyPath(jt.cfg.HistoryDir, h.JobID)
	err := func() error {
		fsys, fp, err := fs.Resolve(ctx, p, fs.Env{Conf: c, User: jt.cfg.User})
		if err != nil {
			return err
		}
		defer fsys.Close()
		w, err := fsys.Create(ctx, fp, fs.CreateOptions{CreateParent: true, Overwrite: true})
		if err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		if err := enc.Encode(h); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	}()
	if err != nil {
		jt.log.Warn("jobtracker: writing job history", "job", h.JobID, "path", p, "err", err)
		return
	}
	jt.log.Info("jobtracker: job history written", "job", h.JobID, "path", p)
}

// ReadHistory reads a job's history from the done dir c names.
func ReadHistory(ctx context.Context, env fs.Env, jobID string) (*History, error) {
	if strings.ContainsAny(jobID, "/\\") || !strings.HasPrefix(jobID, "job_") {
		return nil, fmt.Errorf("bad job id %q", jobID)
	}
	p := historyPath(env.Conf.Get(keyHistoryDir), jobID)
	fsys, fp, err := fs.Resolve(ctx, p, env)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	f, err := fsys.Open(ctx, fp)
	if err != nil {
		return nil, fmt.Errorf("no history for %s: %w", jobID, err)
	}
	defer f.Close()
	var h History
	if err := json.NewDecoder(io.LimitReader(f, maxHistory)).Decode(&h); err != nil {
		return nil, fmt.Errorf("history of %s (%s): %w", jobID, p, err)
	}
	return &h, nil
}
