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
