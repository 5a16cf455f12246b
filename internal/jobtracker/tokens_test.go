package jobtracker

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/taskrun"
)

// fakeTokenOps records renewals and cancellations; each renewal extends
// the token to clock+100s; the next fail renewals fail.
type fakeTokenOps struct {
	mu        sync.Mutex
	clk       *fakeClock
	renewals  int
	fail      int
	cancelled []string
}

func (o *fakeTokenOps) renew(ctx context.Context, t *delegation.Token) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.renewals++
	if o.fail > 0 {
		o.fail--
		return 0, ipc.Errorf(delegation.ClassInvalidToken, "token can't be found in cache")
	}
	return o.clk.t.Add(100 * time.Second).UnixMilli(), nil
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

// advance moves h's clock, which the JobTracker and ops read.
func (h *harness) advance(ops *fakeTokenOps, d time.Duration) {
	h.jt.mu.Lock()
	ops.mu.Lock()
	h.clk.advance(d)
	ops.mu.Unlock()
	h.jt.mu.Unlock()
}

// ownedToken is a delegation token of owner's for service.
func ownedToken(owner, service string, seq int32) delegation.AliasToken {
	id := delegation.Identifier{Owner: owner, Renewer: "jt", IssueDate: 1, MaxDate: 2, SequenceNumber: seq, MasterKeyID: 1}
	return delegation.AliasToken{Alias: service, Token: delegation.Token{Identifier: id.Bytes(), Password: []byte("pw"), Kind: delegation.Kind, Service: service}}
}

// submitWithTokens submits a one-map job of alice's on
// hdfs://127.0.0.1:8020 with toks as its credentials.
func (h *harness) submitWithTokens(toks []delegation.AliasToken, settings ...string) (*job, error) {
	spec := &mrpb.JobSpec{Job: proto.String("wordcount"), Name: proto.String("t"), OutputPath: proto.String(h.dir + "/o"),
		Credentials: delegation.WriteCredentials(toks),
		Splits:      []*mrpb.InputSplit{{Path: proto.String("file:///in/0"), Length: proto.Int64(1), Index: proto.Int32(0)}}}
	kv := append([]string{"fs.defaultFS", "hdfs://127.0.0.1:8020", keyHistoryDir, h.dir + "/history"}, settings...)
	for i := 0; i+1 < len(kv); i += 2 {
		spec.Conf = append(spec.Conf, &mrpb.KeyValue{Key: proto.String(kv[i]), Value: proto.String(kv[i+1])})
	}
	resp, err := h.jt.submitJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.SubmitJobRequest{Spec: spec})
	if err != nil {
		return nil, err
	}
	h.jt.mu.Lock()
	defer h.jt.mu.Unlock()
	return h.jt.jobs[resp.GetJobId()], nil
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

// The JobTracker renews a job's tokens of its file system at submission
// and at 90% of each expiry, retrying a failed renewal, through the job's
// cleanup, and cancels them when the cleanup has ended — whether the job
// succeeded, failed or was killed — unless told not to. A token of
// another service is neither renewed nor cancelled.
func TestJobTokensRenewedThenCancelled(t *testing.T) {
	for _, c := range []struct {
		end         string
		cancelAtEnd bool
	}{{"succeed", true}, {"succeed", false}, {"fail", true}, {"kill", true}} {
		t.Run(fmt.Sprint(c.end, c.cancelAtEnd), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ops := &fakeTokenOps{clk: h.clk}
			h.jt.tokenOps = ops
			toks := []delegation.AliasToken{ownedToken("alice", "127.0.0.1:8020", 1), ownedToken("alice@EXAMPLE.COM", "elsewhere:8020", 2)}
			j, err := h.submitWithTokens(toks, keyCancelTokens, fmt.Sprint(c.cancelAtEnd), keyMapMaxAttempts, "1")
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := ops.counts(); r != 1 {
				t.Fatalf("%v: %d renewals at submission", c, r)
			}
			att := h.heartbeat(beat{tracker: "tt-h1", maps: 1}).GetLaunch()[0].GetAttemptId()
			h.advance(ops, 89*time.Second)
			time.Sleep(1100 * time.Millisecond) // a tick: not due yet (90 s)
			if r, _ := ops.counts(); r != 1 {
				t.Fatalf("renewed %d times before 90%% of the expiry", r)
			}
			// A failed renewal is retried a second later.
			ops.mu.Lock()
			ops.fail = 1
			ops.mu.Unlock()
			h.advance(ops, time.Second)
			waitFor(t, fmt.Sprint(c, " the failed renewal"), func() bool { r, _ := ops.counts(); return r == 2 })
			h.advance(ops, time.Second)
			waitFor(t, "the retry", func() bool { r, _ := ops.counts(); return r == 3 })
			switch c.end {
			case "succeed":
				h.heartbeat(beat{tracker: "tt-h1", reports: []*mrpb.TaskReport{succeeded(att)}})
			case "fail":
				h.heartbeat(beat{tracker: "tt-h1", reports: []*mrpb.TaskReport{failed(att, "boom")}})
			case "kill":
				if _, err := h.jt.killJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.JobIDRequest{JobId: proto.String(j.id)}); err != nil {
					t.Fatal(err)
				}
				h.heartbeat(beat{tracker: "tt-h1", reports: []*mrpb.TaskReport{killed(att)}})
			}
			launch := h.heartbeat(beat{tracker: "tt-h1", maps: 1}).GetLaunch()
			if len(launch) != 1 || launch[0].GetSpec().GetType() != mrpb.TaskType_JOB_CLEANUP {
				t.Fatalf("%v: launched %v, want the cleanup", c, launch)
			}
			// Still renewed while the cleanup runs.
			h.advance(ops, 90*time.Second)
			waitFor(t, "a renewal during the cleanup", func() bool { r, _ := ops.counts(); return r == 4 })
			time.Sleep(1100 * time.Millisecond)
			if _, n := ops.counts(); n != 0 {
				t.Fatalf("%v: cancelled before the cleanup ended", c)
			}
			h.heartbeat(beat{tracker: "tt-h1", reports: []*mrpb.TaskReport{succeeded(launch[0].GetAttemptId())}})
			if c.cancelAtEnd {
				waitFor(t, "the cancellation", func() bool { _, n := ops.counts(); return n == 1 })
			}
			h.jt.Close() // waits for the token manager
			ops.mu.Lock()
			cancelled := ops.cancelled
			ops.mu.Unlock()
			if want := map[bool][]string{true: {"127.0.0.1:8020"}}[c.cancelAtEnd]; !slices.Equal(cancelled, want) {
				t.Fatalf("%v: cancelled %v, want %v", c, cancelled, want)
			}
		})
	}
}

// A submission is refused when the first renewal of a token fails (its
// password is unproven: the JobTracker never cancels it), when a token is
// another user's, and when the credentials are too many or too large.
func TestJobTokensVerifiedAtSubmission(t *testing.T) {
	h := newHarness(t)
	ops := &fakeTokenOps{clk: h.clk, fail: 1}
	h.jt.tokenOps = ops
	mine := ownedToken("alice", "127.0.0.1:8020", 1)
	if _, err := h.submitWithTokens([]delegation.AliasToken{mine}); !ipc.IsClass(err, delegation.ClassInvalidToken) || !strings.Contains(err.Error(), "renewing HDFS_DELEGATION_TOKEN token 1 for alice") {
		t.Fatalf("unrenewable token: %v", err)
	}
	theirs := ownedToken("bob@EXAMPLE.COM", "127.0.0.1:8020", 2)
	if _, err := h.submitWithTokens([]delegation.AliasToken{mine, theirs}); !ipc.IsClass(err, ipc.ClassAccessControl) || !strings.Contains(err.Error(), "token 2 for bob with renewer jt is not alice's") {
		t.Fatalf("bob's token: %v", err)
	}
	many := make([]delegation.AliasToken, maxJobTokens+1)
	for i := range many {
		many[i] = ownedToken("alice", fmt.Sprintf("nn%d:8020", i), int32(i))
	}
	if _, err := h.submitWithTokens(many); !ipc.IsClass(err, ipc.ClassIllegalArgument) {
		t.Fatalf("%d tokens: %v", len(many), err)
	}
	big := ownedToken("alice", "nn:8020", 3)
	big.Token.Password = make([]byte, maxJobCredentialBytes)
	if _, err := h.submitWithTokens([]delegation.AliasToken{big}); !ipc.IsClass(err, ipc.ClassIllegalArgument) {
		t.Fatalf("large credentials: %v", err)
	}
	if r, n := ops.counts(); r != 1 || n != 0 {
		t.Fatalf("%d renewals, %d cancellations", r, n)
	}
	h.jt.mu.Lock()
	n := len(h.jt.jobs)
	h.jt.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d jobs queued", n)
	}
	// An owner the JobTracker's auth_to_local rules map to the submitter
	// is the submitter.
	h.jt.cfg.Security.AuthToLocal = "RULE:[1:$1@$0](carol@EXAMPLE.COM)s/.*/alice/"
	if _, err := h.submitWithTokens([]delegation.AliasToken{ownedToken("carol@EXAMPLE.COM", "127.0.0.1:8020", 4)}); err != nil {
		t.Fatalf("a token of carol@EXAMPLE.COM, alice by the rules: %v", err)
	}
	// A user the submitter may impersonate is accepted.
	h.jt.cfg.Security.ProxyUsers = security.ProxyUsersFromConf(confWith("hadoop.proxyuser.alice.users", "bob", "hadoop.proxyuser.alice.hosts", "*"))
	if _, err := h.submitWithTokens([]delegation.AliasToken{mine, theirs}); err != nil {
		t.Fatalf("bob's token, alice may impersonate bob: %v", err)
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
	spec := &mrpb.JobSpec{Job: proto.String("wordcount"), Name: proto.String("t"), OutputPath: proto.String(h.dir + "/o"), Credentials: []byte("junk")}
	if _, err := h.jt.submitJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.SubmitJobRequest{Spec: spec}); !ipc.IsClass(err, ipc.ClassIllegalArgument) {
		t.Fatalf("junk credentials: %v", err)
	}
	h.jt.tokenOps = &fakeTokenOps{clk: h.clk}
	toks := []delegation.AliasToken{ownedToken("alice", "127.0.0.1:8020", 1)}
	if _, err := h.submitWithTokens(toks); err != nil {
		t.Fatal(err)
	}
	resp := h.heartbeat(beat{tracker: "tt-h1", maps: 1})
	if len(resp.GetLaunch()) != 1 || string(resp.GetLaunch()[0].GetSpec().GetCredentials()) != string(delegation.WriteCredentials(toks)) {
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

func confWith(kv ...string) *conf.Configuration {
	c := conf.New()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}

// Close returns promptly while a renewal waits on a NameNode that never
// answers, at submission or in the token manager.
func TestCloseInterruptsRenewals(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	addr := ln.Addr().String()
	h := newHarness(t)
	if err := h.jt.Start(); err != nil {
		t.Fatal(err)
	}
	// In the token manager: a token renewed at submission (by a fake),
	// due again now, at the black hole.
	j := &job{id: "job_1_0001", state: mrpb.JobState_RUNNING}
	rt := []renewedToken{{tok: ownedToken("alice", addr, 1).Token, at: h.clk.now().Add(-time.Hour), expiry: h.clk.now().UnixMilli()}}
	h.jt.goBackground(func() { h.jt.manageTokens(j, rt, true) })
	// At submission.
	submitted := make(chan error, 1)
	go func() {
		_, err := h.submitWithTokens([]delegation.AliasToken{ownedToken("alice", addr, 2)}, "fs.defaultFS", "hdfs://"+addr)
		submitted <- err
	}()
	for range 2 {
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(10 * time.Second):
			t.Fatal("no renewal reached the NameNode")
		}
	}
	start := time.Now()
	h.jt.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	select {
	case err := <-submitted:
		if err == nil || !strings.Contains(err.Error(), "renewing") {
			t.Fatalf("submission: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the submission still waits")
	}
}
