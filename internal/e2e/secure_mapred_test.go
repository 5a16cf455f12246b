package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/taskrun"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestSecureMapReduceTokens runs TeraGen, TeraSort and TeraValidate as a
// kinit'd user on a kerberos cluster (privacy) with a JobTracker and a
// TaskTracker: the job client obtains a delegation token for the file
// system with the JobTracker as renewer, the tasks (which have no ticket)
// reach the NameNode with it and the JobTracker with their job token, the
// JobTracker renews the token and cancels it when the job ends. A
// TeraSort whose token its owner cancels while its maps run fails, naming
// the token; a client without a token file cannot reach the NameNode.
func TestSecureMapReduceTokens(t *testing.T) {
	r := startRealm(t)
	const prot = "privacy"
	settings := r.settings(prot)
	r.trackerKeytabs(t, settings)
	settings["mapred.tasktracker.map.tasks.maximum"] = "1"
	r.testLogin(t, settings)
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, MapReduce: true, Conf: settings})

	// run runs the CLI with every secure setting and a credential cache.
	run := func(cc string, env []string, args ...string) (string, string, int) {
		var opts []string
		for k, v := range settings {
			if !strings.HasSuffix(k, ".keytab.file") {
				opts = append(opts, "-D", k+"="+v)
			}
		}
		cmd := p.Command(append(opts, args...)...)
		cmd.Env = append(append(os.Environ(), "KRB5CCNAME=FILE:"+cc), env...)
		return runCmd(cmd)
	}
	must := func(cc string, args ...string) string {
		t.Helper()
		out, errs, code := run(cc, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s\njobtracker:\n%s\ntasktracker:\n%s", args, code, out, errs, p.JobTrackerProcess().Log(), p.TaskTrackerProcess(0).Log())
		}
		return out
	}
	must(r.nn_, "dfs", "-mkdir", "-p", "/user/alice")
	must(r.nn_, "dfs", "-chown", "alice", "/user/alice")

	must(r.alice, "-D", "mapreduce.job.maps=2", "examples", "teragen", "20000", "/user/alice/tera/in")
	must(r.alice, "-D", "mapreduce.job.reduces=2", "examples", "terasort", "/user/alice/tera/in", "/user/alice/tera/out")
	must(r.alice, "examples", "teravalidate", "/user/alice/tera/out", "/user/alice/tera/report")
	report := must(r.alice, "dfs", "-cat", "/user/alice/tera/report/part-r-00000")
	if strings.Contains(report, "error") || !strings.Contains(report, "checksum") {
		t.Fatalf("teravalidate report:\n%s", report)
	}
	if out := must(r.alice, "dfs", "-ls", "/user/alice/tera/out"); !strings.Contains(out, "alice") {
		t.Fatalf("the sorted output is not alice's:\n%s", out)
	}
	nnLog := p.NameNodeProcess().Log()
	if !strings.Contains(nnLog, "Auth successful for alice (auth:TOKEN)") {
		t.Fatalf("no task authenticated with a delegation token:\n%s", nnLog)
	}
	waitLog := func(what string, proc *testcluster.Process, want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(proc.Log(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no %q in\n%s", what, want, proc.Log())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	jt := p.JobTrackerProcess()
	// TeraSort's reduces start after its first map (one map slot) and
	// ask the JobTracker for the others with their job token.
	if !regexp.MustCompile(`Auth successful for job_\d+_0002 \(auth:TOKEN\)`).MatchString(jt.Log()) {
		t.Fatalf("no reduce authenticated to the JobTracker with its job token:\n%s", jt.Log())
	}
	waitLog("renewal", jt, "jobtracker: renewed a delegation token")
	waitLog("cancellation at the job's end", jt, "jobtracker: cancelled a delegation token")
	waitLog("the NameNode saw the JobTracker renew", p.NameNodeProcess(), "Auth successful for jt (auth:KERBEROS)")

	// A TeraSort whose token alice cancels once its maps run (one map
	// slot, forty maps) fails, and says which token. Its input comes from
	// a TeraGen that must succeed first.
	must(r.alice, "-D", "mapreduce.job.maps=40", "examples", "teragen", "150000", "/user/alice/tera/in2")
	done := make(chan [3]any, 1)
	go func() {
		out, errs, code := run(r.alice, nil, "-D", "mapreduce.job.reduces=1", "-D", "mapreduce.map.maxattempts=2", "examples", "terasort", "/user/alice/tera/in2", "/user/alice/tera/out2")
		done <- [3]any{out, errs, code}
	}()
	// The TeraSort's id, once the JobTracker has it.
	submitted := regexp.MustCompile(`job submitted" job=(job_\d+_\d+) name=TeraSort`)
	sortJob := ""
	deadline := time.Now().Add(30 * time.Second)
	for sortJob == "" && time.Now().Before(deadline) {
		if m := submitted.FindAllStringSubmatch(jt.Log(), -1); len(m) == 2 {
			sortJob = m[1][1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sortJob == "" {
		t.Fatalf("the second TeraSort was not submitted:\n%s", jt.Log())
	}
	// Read a map's token file while it exists (it goes when the attempt
	// ends); it is mode 0600.
	var ats []delegation.AliasToken
	tokFile := ""
	deadline = time.Now().Add(30 * time.Second)
	for ats == nil && time.Now().Before(deadline) {
		filepath.WalkDir(p.Dir(), func(path string, d fs.DirEntry, err error) error {
			if err != nil || ats != nil || d.Name() != "container_tokens" || !strings.Contains(path, strings.TrimPrefix(sortJob, "job_")+"_m_") {
				return nil
			}
			fi, err1 := os.Stat(path)
			got, err2 := delegation.ReadCredentialsFile(path)
			if err1 == nil && err2 == nil {
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("token file %s has mode %v", path, fi.Mode())
				}
				ats, tokFile = got, path
			}
			return nil
		})
		time.Sleep(20 * time.Millisecond)
	}
	if ats == nil {
		t.Fatalf("no map token file of %s appeared", sortJob)
	}
	var hdfsToks []delegation.AliasToken
	for _, at := range ats {
		if at.Token.Kind == delegation.Kind {
			hdfsToks = append(hdfsToks, at)
		}
	}
	if len(hdfsToks) != 1 {
		t.Fatalf("token file holds %d HDFS tokens", len(hdfsToks))
	}
	cancelFile := filepath.Join(r.dir, "job4.token")
	if err := delegation.WriteCredentialsFile(cancelFile, hdfsToks); err != nil {
		t.Fatal(err)
	}
	must(r.alice, "fetchdt", "--cancel", cancelFile)
	var res [3]any
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the job with a cancelled token did not end")
	}
	id, _ := delegation.DecodeIdentifier(hdfsToks[0].Token.Identifier)
	t.Logf("cancelled %v from %s; the job said:\n%s%s", id, tokFile, res[0], res[1])
	// A later map fails twice on the cancelled token, which fails the job.
	failedMap := regexp.MustCompile(`task m_\d+ failed 2 times; last error: .*token \(` + regexp.QuoteMeta(id.String()) + `\) can't be found in cache`)
	if res[2].(int) == 0 || !failedMap.MatchString(res[1].(string)+res[0].(string)) {
		t.Fatalf("job with a cancelled token: exit %v\n%s%s", res[2], res[0], res[1])
	}

	// A task child without a token file (nor a ticket) cannot reach the
	// NameNode: a map of TeraGen's output, run as a TaskTracker runs it.
	conf := map[string]string{"fs.defaultFS": p.URI()}
	for k, v := range settings {
		if !strings.HasSuffix(k, ".keytab.file") {
			conf[k] = v
		}
	}
	spec := &mrpb.TaskSpec{Job: proto.String("wordcount"), Args: []string{"/user/alice/tera/in", "/user/alice/nocreds"}, User: proto.String("alice"), JobId: proto.String("job_1_0099"),
		Type: mrpb.TaskType_MAP.Enum(), Task: proto.Int32(0), Attempt: proto.Int32(0), Reducers: proto.Int32(1), Conf: conf,
		Split:     &mrpb.InputSplit{Path: proto.String(p.URI() + "/user/alice/tera/in/part-m-00000"), Start: proto.Int64(0), Length: proto.Int64(100), Index: proto.Int32(0)},
		LocalDirs: []string{t.TempDir()}, OutputPath: proto.String("/user/alice/nocreds")}
	var in bytes.Buffer
	if err := taskrun.WriteSpec(&in, spec); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(p.Binary(), "task")
	child.Stdin = &in
	child.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+filepath.Join(r.dir, "none.cc"))
	if out, err := child.Output(); err == nil || !strings.Contains(string(out), "SIMPLE authentication is not enabled") {
		t.Fatalf("a task child without a token file: %v\n%s", err, out)
	}

	// Nor can a client.
	cmd := exec.Command(p.Binary(), append(p.ClientArgs(), "-D", "hadoop.security.authentication=kerberos", "dfs", "-ls", "/")...)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+filepath.Join(r.dir, "none.cc"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "SIMPLE authentication is not enabled") {
		t.Fatalf("without a token file: %v\n%s", err, out)
	}
}
