package jobtracker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/taskrun"
)

// fakeTokenOps records renewals and cancellations; each renewal extends
// the token to clock+10s.
type fakeTokenOps struct {
	mu        sync.Mutex
	clk       *fakeClock
	renewals  int
	cancelled []string
}

func (o *fakeTokenOps) renew(ctx context.Context, t *delegation.Token) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.renewals++
	return o.clk.t.Add(10 * time.Second).UnixMilli(), nil
}

func (o *fakeTokenOps) cancel(ctx context.Context, t *delegation.Token) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelled = append(o.cancelled, t.Service)
	return nil
}

func (o *fakeTokenOps) counts() (int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.renewals, len(o.cancelled)
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRenewalDelay(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	if d := renewalDelay(now.UnixMilli()+100_000, now); d != 90*time.Second {
		t.Fatalf("100 s left: renew in %v, want 90s", d)
	}
	if d := renewalDelay(now.UnixMilli()-5, now); d != time.Second {
		t.Fatalf("expired: renew in %v, want the 1 s floor", d)
	}
}

// The JobTracker renews a job's tokens at once and at 90% of each
// expiry, and cancels them when the job has ended, unless told not to.
func TestJobTokensRenewedThenCancelled(t *testing.T) {
	for _, cancelAtEnd := range []bool{true, false} {
		h := newHarness(t)
		ops := &fakeTokenOps{clk: h.clk}
		h.jt.tokenOps = ops
		j := &job{id: "job_1_0001", state: mrpb.JobState_RUNNING}
		toks := []delegation.Token{{Kind: delegation.Kind, Service: "127.0.0.1:8020"}}
		done := make(chan struct{})
		go func() { h.jt.manageTokens(j, toks, cancelAtEnd); close(done) }()
		waitFor(t, "the first renewal", func() bool { r, _ := ops.counts(); return r == 1 })
		time.Sleep(1100 * time.Millisecond) // a tick: not due yet (9 s)
		if r, _ := ops.counts(); r != 1 {
			t.Fatalf("renewed %d times before 90%% of the expiry", r)
		}
		h.jt.mu.Lock()
		ops.mu.Lock()
		h.clk.advance(9 * time.Second)
		ops.mu.Unlock()
		h.jt.mu.Unlock()
		waitFor(t, "the second renewal", func() bool { r, _ := ops.counts(); return r == 2 })
		h.jt.mu.Lock()
		j.state = mrpb.JobState_SUCCEEDED // no cleanup task: done
		h.jt.mu.Unlock()
		<-done
		if _, c := ops.counts(); (c == 1) != cancelAtEnd {
			t.Fatalf("cancelAtEnd %v: %d cancellations", cancelAtEnd, c)
		}
	}
}

func TestJobTokenRetrieve(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"h1"}}, 1)
	pw, user, real, err := h.jt.retrieveJobToken(jobtoken.Identifier(j.id))
	if err != nil || string(pw) != string(j.secret) || user != j.id || real != "" {
		t.Fatalf("retrieve: %q %q %v", user, real, err)
	}
	if _, _, _, err := h.jt.retrieveJobToken(jobtoken.Identifier("job_1_9999")); ipc.ClassOf(err) != delegation.ClassInvalidToken || !strings.Contains(err.Error(), "can't find job token for job job_1_9999") {
		t.Fatalf("unknown job: %v", err)
	}
	if _, _, _, err := h.jt.retrieveJobToken([]byte{5, 'a'}); ipc.ClassOf(err) != delegation.ClassInvalidToken {
		t.Fatalf("malformed identifier: %v", err)
	}
	// A job token reads its own job's events only.
	ctx := ipc.WithCaller(context.Background(), &ipc.Caller{User: "job_1_0042", Auth: ipc.AuthMethodToken})
	if _, err := h.jt.getMapCompletionEvents(ctx, &mrpb.MapCompletionEventsRequest{JobId: proto.String(j.id)}); !ipc.IsClass(err, ipc.ClassAccessControl) {
		t.Fatalf("another job's token: %v", err)
	}
	ctx = ipc.WithCaller(context.Background(), &ipc.Caller{User: j.id, Auth: ipc.AuthMethodToken})
	if _, err := h.jt.getMapCompletionEvents(ctx, &mrpb.MapCompletionEventsRequest{JobId: proto.String(j.id)}); err != nil {
		t.Fatalf("its own job's token: %v", err)
	}
}

// Submitted credentials reach every attempt's spec; malformed ones are
// refused at submission.
func TestJobCredentialsShipped(t *testing.T) {
	h := newHarness(t)
	creds := delegation.WriteCredentials([]delegation.AliasToken{{Alias: "nn:8020", Token: delegation.Token{Identifier: []byte{1}, Password: []byte{2}, Kind: delegation.Kind, Service: "nn:8020"}}})
	spec := &mrpb.JobSpec{Job: proto.String("wordcount"), Name: proto.String("t"), OutputPath: proto.String(h.dir + "/o"), Credentials: []byte("junk")}
	if _, err := h.jt.submitJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.SubmitJobRequest{Spec: spec}); !ipc.IsClass(err, ipc.ClassIllegalArgument) {
		t.Fatalf("junk credentials: %v", err)
	}
	h.jt.tokenOps = &fakeTokenOps{clk: h.clk}
	spec.Credentials = creds
	spec.Splits = []*mrpb.InputSplit{{Path: proto.String("file:///in/0"), Length: proto.Int64(1), Index: proto.Int32(0)}}
	if _, err := h.jt.submitJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.SubmitJobRequest{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	resp := h.heartbeat(beat{tracker: "tt-h1", maps: 1})
	if len(resp.GetLaunch()) != 1 || string(resp.GetLaunch()[0].GetSpec().GetCredentials()) != string(creds) {
		t.Fatalf("launched %v without the job's credentials", resp.GetLaunch())
	}
}

// startTokenJT starts h's JobTracker taking job tokens (TOKEN) only.
func startTokenJT(t *testing.T, h *harness) {
	t.Helper()
	h.jt.srv.SetSASL(&ipc.SASLConfig{
		Mechanisms: []ipc.SASLMechanism{&ipc.TokenMechanism{Retrieve: h.jt.retrieveJobToken}},
		MapUser:    func(p string) (string, error) { return p, nil },
	})
	if err := h.jt.Start(); err != nil {
		t.Fatal(err)
	}
}

// A job token authenticates a task's getMapCompletionEvents of its own
// job and nothing else: not submitJob, killJob, getJobStatus, listJobs
// or heartbeat (a client labels it as the protocol's token kind to
// present it), and not the events of another job.
func TestJobTokenOnlyForTaskCalls(t *testing.T) {
	h := newHarness(t)
	startTokenJT(t, h)
	j := h.submit([][]string{{"h1"}}, 1)
	other := h.submit([][]string{{"h1"}}, 1)
	call := func(protocol, kind, method string, req, resp proto.Message) error {
		tok := delegation.Token{Identifier: jobtoken.Identifier(j.id), Password: j.secret, Kind: kind, Service: h.jt.Addr()}
		cl := ipc.NewClient(ipc.ClientConfig{Addr: h.jt.Addr(), Protocol: protocol, Tokens: []delegation.Token{tok}})
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return cl.Call(ctx, method, req, resp)
	}
	spec := &mrpb.JobSpec{Job: proto.String("wordcount"), Name: proto.String("t"), OutputPath: proto.String(h.dir + "/evil")}
	for _, kind := range []string{delegation.Kind} {
		for _, c := range []struct {
			protocol, method string
			req, resp        proto.Message
		}{
			{SubmissionProtocol, "submitJob", &mrpb.SubmitJobRequest{Spec: spec}, &mrpb.SubmitJobResponse{}},
			{SubmissionProtocol, "killJob", &mrpb.JobIDRequest{JobId: proto.String(j.id)}, &mrpb.KillJobResponse{}},
			{SubmissionProtocol, "getJobStatus", &mrpb.JobIDRequest{JobId: proto.String(j.id)}, &mrpb.JobStatusResponse{}},
			{SubmissionProtocol, "listJobs", &mrpb.ListJobsRequest{}, &mrpb.ListJobsResponse{}},
			{InterTrackerProtocol, "heartbeat", &mrpb.HeartbeatRequest{Tracker: proto.String("tt")}, &mrpb.HeartbeatResponse{}},
		} {
			err := call(c.protocol, kind, c.method, c.req, c.resp)
			want := "User " + j.id + " (auth:TOKEN) is not authorized for protocol " + c.protocol
			if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s with a job token (%s): %v", c.protocol, c.method, kind, err)
			}
		}
	}
	h.jt.mu.Lock()
	state := j.state
	n := len(h.jt.jobs)
	h.jt.mu.Unlock()
	if state != mrpb.JobState_RUNNING || n != 2 {
		t.Fatalf("after the refused calls: job %v, %d jobs", state, n)
	}
	resp := &mrpb.MapCompletionEventsResponse{}
	if err := call(taskrun.UmbilicalProtocol, jobtoken.Kind, "getMapCompletionEvents", &mrpb.MapCompletionEventsRequest{JobId: proto.String(j.id)}, resp); err != nil || resp.GetJobState() != mrpb.JobState_RUNNING {
		t.Fatalf("its own job's events: %v %v", resp, err)
	}
	if err := call(taskrun.UmbilicalProtocol, jobtoken.Kind, "getMapCompletionEvents", &mrpb.MapCompletionEventsRequest{JobId: proto.String(other.id)}, resp); !ipc.IsClass(err, ipc.ClassAccessControl) {
		t.Fatalf("another job's events: %v", err)
	}
}
