package e2e

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/minikdc"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestLocalSecureAsAUser runs `strata local -secure` and uses it as its
// output tells a user to: the printed kinit line, then the strata shell
// (files owned by the ticket's user, HADOOP_USER_NAME ignored, Hadoop's
// refusal without a ticket) and curl against WebHDFS (SPNEGO, OPEN and
// CREATE through the DataNode redirect with the ticket, a delegation token
// fetched with it, then OPEN and CREATE with the token alone; the
// DataNode refuses a name without a token, and a cancelled token).
func TestLocalSecureAsAUser(t *testing.T) {
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	bin := testcluster.Binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "local", "-secure", "-datanodes", "2", "-data", data,
		"-D", "dfs.namenode.rpc-address=127.0.0.1:0", "-D", "dfs.namenode.http-address=127.0.0.1:0",
		"-D", "mapreduce.jobtracker.address=127.0.0.1:0")
	cmd.Env = append(cleanEnv(), "PATH="+os.Getenv("PATH"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("strata local -secure exited with %v; stderr:\n%s", err, errb.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("strata local -secure did not stop on Ctrl-C")
		}
	}()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "STRATA_CONF_DIR") {
			break
		}
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	text := out.String()
	pw := regexp.MustCompile(`password (\S+)`).FindStringSubmatch(text)
	kinit := regexp.MustCompile(`(?m)^  (KRB5_CONFIG=(\S+) KRB5CCNAME=(\S+) kinit ((\S+)@\S+))$`).FindStringSubmatch(text)
	curlLine := regexp.MustCompile(`curl --negotiate -u : '([^']+)'`).FindStringSubmatch(text)
	if pw == nil || kinit == nil || curlLine == nil {
		t.Fatalf("output:\n%s\nstderr:\n%s", text, errb.String())
	}
	user := kinit[5]
	if !strings.Contains(text, "your home      /user/"+user) {
		t.Errorf("no home directory in the output:\n%s", text)
	}
	web, _ := url.Parse(curlLine[1])
	env := append(cleanEnv(), "PATH="+os.Getenv("PATH"), "STRATA_CONF_DIR="+filepath.Join(data, "conf"),
		"KRB5_CONFIG="+kinit[2], "KRB5CCNAME="+kinit[3])
	noTicket := append(cleanEnv(), "PATH="+os.Getenv("PATH"), "STRATA_CONF_DIR="+filepath.Join(data, "conf"),
		"KRB5_CONFIG="+kinit[2], "KRB5CCNAME=FILE:"+filepath.Join(dir, "no-ticket"))
	strata := func(env []string, args ...string) (string, error) {
		c := exec.Command(bin, args...)
		c.Env = env
		b, err := c.CombinedOutput()
		return string(b), err
	}
	curl := func(env []string, args ...string) (code, body string) {
		t.Helper()
		bodyFile := filepath.Join(dir, "curl.out")
		c := exec.Command("curl", append([]string{"-s", "--max-time", "30", "-o", bodyFile, "-w", "%{http_code}"}, args...)...)
		c.Env = env
		b, err := c.Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		bb, _ := os.ReadFile(bodyFile)
		return string(b), string(bb)
	}
	// redirect is where the NameNode sends a request: its Location.
	redirect := func(env []string, args ...string) *url.URL {
		t.Helper()
		c := exec.Command("curl", append([]string{"-s", "--max-time", "30", "-o", os.DevNull, "-w", "%{redirect_url}"}, args...)...)
		c.Env = env
		b, err := c.Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		u, err := url.Parse(string(b))
		if err != nil || u.Host == "" {
			t.Fatalf("curl %v: no redirect (%q)", args, b)
		}
		return u
	}

	// Before kinit: Hadoop's refusal.
	if o, err := strata(env, "dfs", "-ls", "/"); err == nil || !strings.Contains(o, "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
		t.Fatalf("ls without a ticket: %v\n%s", err, o)
	}
	k := exec.Command("sh", "-c", kinit[1])
	k.Env = append(cleanEnv(), "PATH="+os.Getenv("PATH"))
	k.Stdin = strings.NewReader(pw[1] + "\n")
	if b, err := k.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", kinit[1], err, b)
	}

	home := "/user/" + user
	local := filepath.Join(dir, "in.txt")
	payload := strings.Repeat("secure bytes\n", 50000)
	os.WriteFile(local, []byte(payload), 0o644)
	for _, args := range [][]string{
		{"dfs", "-mkdir", "-p", home + "/d"},
		{"dfs", "-put", local, home + "/d/f.txt"},
	} {
		if o, err := strata(env, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, o)
		}
	}
	o, err := strata(env, "dfs", "-ls", home+"/d")
	if err != nil || !regexp.MustCompile(`-rw-r--r--\s+\d+ `+user+` supergroup\s+650000 .* `+home+`/d/f.txt`).MatchString(o) {
		t.Fatalf("ls: %v\n%s", err, o)
	}
	if o, err := strata(env, "dfs", "-cat", home+"/d/f.txt"); err != nil || o != payload {
		t.Fatalf("cat: %v (%d bytes)", err, len(o))
	}
	got := filepath.Join(dir, "got.txt")
	if o, err := strata(env, "dfs", "-get", home+"/d/f.txt", got); err != nil {
		t.Fatalf("get: %v\n%s", err, o)
	}
	if b, _ := os.ReadFile(got); string(b) != payload {
		t.Fatalf("get: %d bytes", len(b))
	}
	// Naming the superuser (or anyone) changes nothing: the ticket decides.
	for _, claim := range []string{"nn", "root"} {
		o, err := strata(append(env, "HADOOP_USER_NAME="+claim), "dfs", "-chown", "nobody", home+"/d/f.txt")
		if user != "nn" && (err == nil || !strings.Contains(o, "Permission denied")) {
			t.Errorf("HADOOP_USER_NAME=%s chown: %v\n%s", claim, err, o)
		}
	}
	if o, _ := strata(env, "dfs", "-ls", home+"/d/f.txt"); !strings.Contains(o, " "+user+" supergroup") {
		t.Errorf("owner changed:\n%s", o)
	}
	if o, err := strata(noTicket, "dfs", "-ls", "/"); err == nil || !strings.Contains(o, "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
		t.Errorf("ls without a ticket: %v\n%s", err, o)
	}

	// WebHDFS with SPNEGO, then with a delegation token and no ticket.
	base := "http://" + web.Host + "/webhdfs/v1"
	if code, body := curl(env, "--negotiate", "-u", ":", base+home+"/d?op=LISTSTATUS"); code != "200" || !strings.Contains(body, `"owner":"`+user+`"`) {
		t.Fatalf("SPNEGO LISTSTATUS: %s %s", code, body)
	}
	// OPEN and CREATE through the DataNode with the ticket alone: the
	// NameNode's redirect carries a token it issued to the user there and
	// then (no user.name), the DataNode's only credential towards the
	// NameNode; no proxy-user rule names the DataNode.
	nego := []string{"--negotiate", "-u", ":"}
	loc := redirect(env, append(nego, base+home+"/d/f.txt?op=OPEN&length=13")...)
	if q := loc.Query(); q.Get("delegation") == "" || q.Has("user.name") {
		t.Fatalf("the SPNEGO OPEN's redirect: %s", loc)
	}
	if it, err := delegation.DecodeURLString(loc.Query().Get("delegation")); err != nil {
		t.Fatalf("the redirect's token: %v", err)
	} else if id, err := delegation.DecodeIdentifier(it.Identifier); err != nil || id.User() != user || id.Renewer != user {
		t.Fatalf("the redirect's token: %+v %v", id, err)
	}
	if code, body := curl(env, append(nego, "-L", base+home+"/d/f.txt?op=OPEN&length=13")...); code != "200" || body != "secure bytes\n" {
		t.Errorf("SPNEGO OPEN through the DataNode: %s %q", code, body)
	}
	byTicket := filepath.Join(dir, "ticket.txt")
	os.WriteFile(byTicket, []byte("by ticket\n"), 0o644)
	if code, body := curl(env, append(nego, "-L", "-T", byTicket, base+home+"/d/s.txt?op=CREATE")...); code != "201" {
		t.Errorf("SPNEGO CREATE through the DataNode: %s %s", code, body)
	}
	if o, err := strata(env, "dfs", "-cat", home+"/d/s.txt"); err != nil || o != "by ticket\n" {
		t.Errorf("the file written with the ticket: %v %q", err, o)
	}
	if o, _ := strata(env, "dfs", "-ls", home+"/d/s.txt"); !strings.Contains(o, " "+user+" supergroup") {
		t.Errorf("the ticket's file is not the user's:\n%s", o)
	}
	// The DataNode's calls were the user's, authenticated by the token.
	if !regexp.MustCompile(`Auth successful for ` + regexp.QuoteMeta(user) + `(@\S+)? \(auth:TOKEN\)`).MatchString(errb.String()) {
		t.Errorf("no TOKEN authentication of %s in the NameNode's log:\n%s", user, errb.String())
	}
	// The DataNode never acts on a name: the redirect without its token.
	q := loc.Query()
	q.Del("delegation")
	q.Set("user.name", user)
	loc.RawQuery = q.Encode()
	if code, body := curl(noTicket, loc.String()); code != "401" || !strings.Contains(body, "Security enabled but user not authenticated by filter") {
		t.Errorf("the DataNode with user.name and no token: %s %s", code, body)
	}

	code, body := curl(env, "--negotiate", "-u", ":", base+"/?op=GETDELEGATIONTOKEN")
	var tok struct{ Token struct{ URLString string } }
	if err := json.Unmarshal([]byte(body), &tok); code != "200" || err != nil || tok.Token.URLString == "" {
		t.Fatalf("GETDELEGATIONTOKEN: %s %s", code, body)
	}
	dt := "&delegation=" + tok.Token.URLString
	if code, body := curl(noTicket, base+home+"/d?op=LISTSTATUS"+dt); code != "200" || !strings.Contains(body, `"pathSuffix":"f.txt"`) {
		t.Errorf("LISTSTATUS with the token: %s %s", code, body)
	}
	if code, body := curl(noTicket, "-L", base+home+"/d/f.txt?op=OPEN&length=13"+dt); code != "200" || body != "secure bytes\n" {
		t.Errorf("OPEN with the token: %s %q", code, body)
	}
	os.WriteFile(local, []byte("by token\n"), 0o644)
	if code, body := curl(noTicket, "-L", "-X", "PUT", "-T", local, base+home+"/d/w.txt?op=CREATE"+dt); code != "201" {
		t.Errorf("CREATE with the token: %s %s", code, body)
	}
	if o, err := strata(env, "dfs", "-cat", home+"/d/w.txt"); err != nil || o != "by token\n" {
		t.Errorf("the file written with the token: %v %q", err, o)
	}
	if o, _ := strata(env, "dfs", "-ls", home+"/d/w.txt"); !strings.Contains(o, " "+user+" supergroup") {
		t.Errorf("the token's file is not the owner's:\n%s", o)
	}
	// Neither ticket nor token: 401; a token a byte off: refused.
	if code, _ := curl(noTicket, base+home+"/d?op=LISTSTATUS"); code != "401" {
		t.Errorf("no ticket, no token: %s", code)
	}
	if code, _ := curl(noTicket, base+home+"/d?op=LISTSTATUS&user.name="+user); code != "401" {
		t.Errorf("user.name alone: %s", code)
	}
	// A token cancelled after the NameNode's redirect: the DataNode's
	// NameNode calls are refused.
	loc = redirect(noTicket, base+home+"/d/f.txt?op=OPEN"+dt)
	if code, body := curl(env, append(nego, "-X", "PUT", base+"/?op=CANCELDELEGATIONTOKEN&token="+tok.Token.URLString)...); code != "200" {
		t.Fatalf("cancel: %s %s", code, body)
	}
	if code, body := curl(noTicket, loc.String()); code != "403" || !strings.Contains(body, "InvalidToken") {
		t.Errorf("OPEN at the DataNode with a cancelled token: %s %s", code, body)
	}
	forged, err := delegation.DecodeURLString(tok.Token.URLString)
	if err != nil {
		t.Fatal(err)
	}
	forged.Password[0] ^= 1
	if code, body := curl(noTicket, base+home+"/d?op=LISTSTATUS&delegation="+forged.EncodeToURLString()); code != "403" || !strings.Contains(body, "InvalidToken") {
		t.Errorf("a forged token: %s %s", code, body)
	}

	// A job on the trackers, as the user: the job client gets a token
	// renewable by the JobTracker, which renews it as its own principal
	// (in strata local it shares its process with the NameNode), and the
	// tasks read and write HDFS with it.
	for _, args := range [][]string{
		{"examples", "teragen", "2000", home + "/tera/in"},
		{"-D", "mapreduce.job.reduces=2", "examples", "terasort", home + "/tera/in", home + "/tera/out"},
		{"examples", "teravalidate", home + "/tera/out", home + "/tera/report"},
	} {
		if o, err := strata(env, args...); err != nil || !strings.Contains(o, "completed successfully") {
			t.Fatalf("%v as %s: %v\n%s", args, user, err, o)
		}
	}
	if o, err := strata(env, "dfs", "-ls", home+"/tera"); err != nil || !strings.Contains(o, user+" supergroup") {
		t.Fatalf("the job's output is not the user's: %v\n%s", err, o)
	}
}

// cleanEnv is the environment without Kerberos or Hadoop settings of the
// test's own process.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", strings.HasPrefix(k, "KRB5"), strings.HasPrefix(k, "HADOOP_"), strings.HasPrefix(k, "STRATA_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}
