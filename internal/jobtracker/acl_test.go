package jobtracker

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

func TestParseACL(t *testing.T) {
	for _, tc := range []struct {
		acl    string
		user   string
		groups []string
		want   bool
	}{
		{"*", "anyone", nil, true},
		{" ", "alice", []string{"g"}, false},
		{"", "alice", nil, false},
		{"alice,bob", "bob", nil, true},
		{"alice,bob", "carol", []string{"alice"}, false},
		{"alice admins,ops", "carol", []string{"ops"}, true},
		{" admins", "admins", nil, false}, // a group, not a user
		{" admins", "dave", []string{"admins"}, true},
	} {
		if got := ParseACL(tc.acl).Allows(tc.user, tc.groups); got != tc.want {
			t.Errorf("ACL %q allows %s %v: %v, want %v", tc.acl, tc.user, tc.groups, got, tc.want)
		}
	}
}

// TestJobOwnership: a job is its submitter's whatever its spec claims;
// only its owner, an administrator (by name or group), the JobTracker's
// user or one its mapreduce.job.acl-modify-job names may kill it, others
// get Hadoop's AccessControlException; with ACLs off anyone may.
func TestJobOwnership(t *testing.T) {
	as := func(user string) context.Context {
		return ipc.WithCaller(context.Background(), &ipc.Caller{User: user})
	}
	h := newHarness(t)
	h.jt.cfg.User = "jtuser"
	h.jt.cfg.Admins = ParseACL("root admins")
	h.jt.cfg.Groups = func(u string) []string { return map[string][]string{"dave": {"admins"}, "erin": {"friends"}}[u] }
	submit := func(user string, settings ...*mrpb.KeyValue) *job {
		t.Helper()
		spec := &mrpb.JobSpec{Job: proto.String("wordcount"), User: proto.String("root"), NumReduces: proto.Int32(0),
			OutputPath: proto.String(h.dir + "/out"), Conf: settings,
			Splits: []*mrpb.InputSplit{{Path: proto.String("file:///in"), Length: proto.Int64(1), Index: proto.Int32(0)}}}
		resp, err := h.jt.submitJob(as(user), &mrpb.SubmitJobRequest{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return h.jt.jobs[resp.GetJobId()]
	}
	if _, err := h.jt.submitJob(context.Background(), &mrpb.SubmitJobRequest{Spec: &mrpb.JobSpec{OutputPath: proto.String("x")}}); err == nil {
		t.Fatal("a submission without a caller was accepted")
	}
	kill := func(user string, j *job) error {
		_, err := h.jt.killJob(as(user), &mrpb.JobIDRequest{JobId: proto.String(j.id)})
		return err
	}
	for _, tc := range []struct {
		killer string
		acl    string
		ok     bool
	}{
		{"bob", "", false},
		{"alice", "", true},
		{"root", "", true},
		{"dave", "", true}, // in the admins group
		{"jtuser", "", true},
		{"bob", "bob", true},
		{"erin", " friends", true},
		{"erin", "bob", false},
	} {
		var settings []*mrpb.KeyValue
		if tc.acl != "" {
			settings = append(settings, &mrpb.KeyValue{Key: proto.String(keyACLModifyJob), Value: proto.String(tc.acl)})
		}
		j := submit("alice", settings...)
		if j.user != "alice" || j.spec.GetUser() != "alice" {
			t.Fatalf("a spec claiming root, submitted by alice, is %q's", j.user)
		}
		err := kill(tc.killer, j)
		if tc.ok != (err == nil) {
			t.Fatalf("%s kills alice's job (acl %q): %v", tc.killer, tc.acl, err)
		}
		if err != nil {
			want := "User " + tc.killer + " cannot perform operation KILL_JOB on " + j.id
			if !ipc.IsClass(err, ipc.ClassAccessControl) || !strings.Contains(err.Error(), want) || j.state != mrpb.JobState_RUNNING {
				t.Fatalf("refused kill: %v, state %s; want %q", err, j.state, want)
			}
		} else if j.state != mrpb.JobState_KILLED || j.err != "killed by "+tc.killer {
			t.Fatalf("job %s %q", j.state, j.err)
		}
	}
	h.jt.cfg.ACLsEnabled = false
	if err := kill("bob", submit("alice")); err != nil {
		t.Fatalf("with ACLs off: %v", err)
	}
}

// TestJobToken: every attempt of a job carries the job's own 64-byte
// shuffle secret, another job's is different, the cleanup attempt carries
// none, and the JobTracker forgets it when the job ends.
func TestJobToken(t *testing.T) {
	h := newHarness(t)
	a := h.submit([][]string{nil}, 1, keySlowstart, "1")
	b := h.submit([][]string{nil}, 0)
	resp := h.heartbeat(beat{tracker: "tt-a", maps: 2})
	if len(resp.GetLaunch()) != 2 {
		t.Fatalf("launched %v", resp.GetLaunch())
	}
	tokA, tokB := resp.GetLaunch()[0].GetSpec().GetJobToken(), resp.GetLaunch()[1].GetSpec().GetJobToken()
	if len(tokA) != 64 || len(tokB) != 64 || string(tokA) == string(tokB) || string(tokA) != string(a.secret) || string(tokB) != string(b.secret) {
		t.Fatalf("tokens %x / %x", tokA, tokB)
	}
	_, ids := launched(resp)
	resp = h.heartbeat(beat{tracker: "tt-a", reduces: 1, reports: []*mrpb.TaskReport{succeeded(ids[0])}})
	if l := resp.GetLaunch(); len(l) != 1 || string(l[0].GetSpec().GetJobToken()) != string(tokA) {
		t.Fatalf("the reduce's launch %v", l)
	}
	_, r := launched(resp)
	resp = h.heartbeat(beat{tracker: "tt-a", maps: 1, reports: []*mrpb.TaskReport{succeeded(r[0])}})
	if l := resp.GetLaunch(); len(l) != 1 || l[0].GetSpec().GetType() != mrpb.TaskType_JOB_CLEANUP || len(l[0].GetSpec().GetJobToken()) != 0 {
		t.Fatalf("the cleanup's launch %v", l)
	}
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(resp.GetLaunch()[0].GetAttemptId())}})
	if a.state != mrpb.JobState_SUCCEEDED || a.secret != nil {
		t.Fatalf("job %s, secret kept: %v", a.state, a.secret != nil)
	}
}
