package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/minikdc"
)

// syncBuffer is a bytes.Buffer safe for one writer and one poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// localRun is a `strata local` running in this test process.
type localRun struct {
	out, errb syncBuffer
	cancel    context.CancelFunc
	done      chan int
}

// startLocal runs `strata local args...` with configuration c and
// returns once it has printed how to use it; it is stopped when the test
// ends, if not before.
func startLocal(t *testing.T, c *conf.Configuration, args ...string) *localRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &localRun{cancel: cancel, done: make(chan int, 1)}
	go func() { l.done <- runLocal(ctx, &Env{Conf: c, Stdout: &l.out, Stderr: &l.errb}, args) }()
	t.Cleanup(func() { l.stop() })
	for deadline := time.Now().Add(time.Minute); !strings.Contains(l.out.String(), "Use it with"); time.Sleep(50 * time.Millisecond) {
		select {
		case code := <-l.done:
			l.done <- code
			t.Fatalf("local exited %d: %s%s", code, l.out.String(), l.errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("local did not start: %s", l.out.String())
		}
	}
	return l
}

// cliWith returns a runner of strata commands with --config dir that
// fails the test when one fails, and returns its output.
func cliWith(t *testing.T, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		var o, e bytes.Buffer
		if code := Main(append([]string{"--config", dir}, args...), nil, &o, &e); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.String())
		}
		return o.String()
	}
}

// stop ends the cluster and returns its exit code; -1 if it does not end
// within 30 s.
func (l *localRun) stop() int {
	l.cancel()
	select {
	case code := <-l.done:
		l.done <- code
		return code
	case <-time.After(30 * time.Second):
		return -1
	}
}

// `strata local -ha` runs nameservice ns1 of three NameNodes, lists them
// with their roles, and writes a config directory through which the
// other commands reach the active one as hdfs://ns1.
func TestLocalHA(t *testing.T) {
	data := t.TempDir()
	l := startLocal(t, conf.New(), "-ha", "-data", data, "-datanodes", "1", "-nomapreduce")
	out := &l.out
	text := out.String()
	if !strings.Contains(text, "Nameservice    ns1") || strings.Count(text, "NameNode nn") != 3 ||
		strings.Count(text, " active\n") != 1 || strings.Count(text, " standby\n") != 2 {
		t.Fatalf("listing:\n%s", text)
	}
	confDir := filepath.Join(data, "conf")
	cc, err := conf.Load(confDir)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Get("fs.defaultFS") != "hdfs://ns1" || cc.Get("dfs.ha.namenodes.ns1") != "nn1,nn2,nn3" {
		t.Fatalf("config dir: fs.defaultFS %q, members %q", cc.Get("fs.defaultFS"), cc.Get("dfs.ha.namenodes.ns1"))
	}
	run := cliWith(t, confDir)
	if socks, _ := filepath.Glob(filepath.Join(data, "run", "dn*.sock")); len(socks) != 1 || cc.Get("dfs.client.read.shortcircuit") != "true" {
		t.Fatalf("short-circuit reads: DataNode sockets %v, dfs.client.read.shortcircuit %q", socks, cc.Get("dfs.client.read.shortcircuit"))
	}
	run("dfs", "-mkdir", "-p", "/local/ha")
	if ls := run("dfs", "-ls", "/local"); !strings.Contains(ls, "/local/ha") {
		t.Fatalf("ls /local: %q", ls)
	}
	if st := run("haadmin", "-getAllServiceState"); strings.Count(st, "active") != 1 || strings.Count(st, "standby") != 2 {
		t.Fatalf("haadmin -getAllServiceState:\n%s", st)
	}
	if code := l.stop(); code != 0 {
		t.Fatalf("local exited %d: %s", code, l.errb.String())
	}
}

// `strata local -secure` runs a KDC, prints the user's password and the
// kinit line; after that kinit, curl --negotiate reads the NameNode's
// WebHDFS, and without it the request is refused.
func TestLocalSecure(t *testing.T) {
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	data := t.TempDir()
	t.Setenv("KRB5_CONFIG", "") // runLocal sets it for its daemons
	c := conf.New()
	c.Set("dfs.namenode.rpc-address", "127.0.0.1:0")
	c.Set("dfs.namenode.http-address", "127.0.0.1:0")
	l := startLocal(t, c, "-secure", "-data", data, "-datanodes", "1", "-nomapreduce")
	out := &l.out
	text := out.String()
	pw := regexp.MustCompile(`password (\S+)`).FindStringSubmatch(text)
	kinit := regexp.MustCompile(`(?m)^  (KRB5_CONFIG=(\S+) KRB5CCNAME=(\S+) kinit (\S+))$`).FindStringSubmatch(text)
	curlLine := regexp.MustCompile(`curl --negotiate -u : '([^']+)'`).FindStringSubmatch(text)
	if pw == nil || kinit == nil || curlLine == nil {
		t.Fatalf("output:\n%s", text)
	}
	cc, err := conf.Load(filepath.Join(data, "conf"))
	if err != nil {
		t.Fatal(err)
	}
	if cc.Get("hadoop.security.authentication") != "kerberos" || !strings.HasPrefix(cc.Get("dfs.namenode.kerberos.principal"), "nn/_HOST@") {
		t.Errorf("client config: %q %q", cc.Get("hadoop.security.authentication"), cc.Get("dfs.namenode.kerberos.principal"))
	}
	env := []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "KRB5_CONFIG=" + kinit[2], "KRB5CCNAME=" + kinit[3]}
	curlPath := func(path string) string {
		u := curlLine[1]
		if path != "" {
			pu, _ := url.Parse(u)
			u = pu.Scheme + "://" + pu.Host + path
		}
		cmd := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "--negotiate", "-u", ":", u)
		cmd.Env = env
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		return string(b)
	}
	curl := func() string { return curlPath("") }
	if code := curl(); code != "401" {
		t.Fatalf("before kinit: %s", code)
	}
	// Naming the superuser gets nowhere without a ticket: not the pages
	// that act as a user, not the NameNode-to-NameNode endpoints.
	for _, p := range []string{"/explorer?path=/&user.name=" + os.Getenv("USER"), "/fsck?path=/&user.name=hdfs", "/strata/ha/version", "/strata/ha/digest"} {
		if code := curlPath(p); code != "401" {
			t.Errorf("%s before kinit: %s", p, code)
		}
	}
	k := exec.Command("kinit", kinit[4])
	k.Env, k.Stdin = env, strings.NewReader(pw[1]+"\n")
	if b, err := k.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", kinit[1], err, b)
	}
	if code := curl(); code != "200" {
		t.Fatalf("after kinit: %s", code)
	}
	if code := curlPath("/strata/ha/version"); code != "403" {
		t.Errorf("/strata/ha/version as the user: %s", code)
	}
	// strata fsck authenticates with the same ticket: the user is not
	// the superuser (the NameNode's principal's user, nn), who is.
	t.Setenv("KRB5_CONFIG", kinit[2])
	t.Setenv("KRB5CCNAME", kinit[3])
	pu, err := url.Parse(curlLine[1])
	if err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	fsckArgs := []string{"--config", filepath.Join(data, "conf"), "-D", "dfs.namenode.http-address=127.0.0.1:" + pu.Port(), "fsck", "/"}
	if code := Main(fsckArgs, nil, &o, &e); code == 0 || !strings.Contains(o.String()+e.String(), "Superuser privilege is required") {
		t.Fatalf("fsck with the user's ticket: exit %d: %s%s", code, o.String(), e.String())
	}
	nnCache := "FILE:" + filepath.Join(data, "nn.cc")
	kt := exec.Command("kinit", "-kt", filepath.Join(data, "kdc", "nn.keytab"), "nn/localhost")
	kt.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "KRB5_CONFIG=" + kinit[2], "KRB5CCNAME=" + nnCache}
	if b, err := kt.CombinedOutput(); err != nil {
		t.Fatalf("kinit -kt nn.keytab: %v %s", err, b)
	}
	t.Setenv("KRB5CCNAME", nnCache)
	o.Reset()
	e.Reset()
	if code := Main(fsckArgs, nil, &o, &e); code != 0 || !strings.Contains(o.String(), "is HEALTHY") {
		t.Fatalf("fsck as nn: exit %d: %s%s", code, o.String(), e.String())
	}
	t.Setenv("KRB5CCNAME", "FILE:"+filepath.Join(data, "none.cc"))
	o.Reset()
	e.Reset()
	if code := Main(fsckArgs, nil, &o, &e); code == 0 || !strings.Contains(e.String(), "kinit") {
		t.Fatalf("fsck without a ticket: exit %d: %s%s", code, o.String(), e.String())
	}
}

// `strata local` turns on short-circuit local reads: its DataNodes listen
// on Unix sockets under <data>/run, its config directory sends clients
// there, and a read through it is served that way, with the file's bytes.
func TestLocalShortCircuitReads(t *testing.T) {
	data := t.TempDir()
	c := conf.New()
	c.Set("dfs.namenode.rpc-address", "127.0.0.1:0")
	c.Set("dfs.namenode.http-address", "127.0.0.1:0")
	l := startLocal(t, c, "-data", data, "-datanodes", "1", "-nomapreduce")
	out := &l.out
	confDir := filepath.Join(data, "conf")
	cc, err := conf.Load(confDir)
	if err != nil {
		t.Fatal(err)
	}
	pattern := cc.Get("dfs.domain.socket.path")
	if cc.Get("dfs.client.read.shortcircuit") != "true" || pattern != filepath.Join(data, "run", "dn_PORT.sock") {
		t.Fatalf("config dir: shortcircuit %q, socket %q", cc.Get("dfs.client.read.shortcircuit"), pattern)
	}
	if socks, _ := filepath.Glob(filepath.Join(data, "run", "dn*.sock")); len(socks) != 1 {
		t.Fatalf("DataNode sockets: %v", socks)
	}
	src := filepath.Join(t.TempDir(), "src")
	want := bytes.Repeat([]byte("short-circuit "), 100000)
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	run := cliWith(t, confDir)
	run("dfs", "-put", src, "/sc")
	if got := run("dfs", "-cat", "/sc"); got != string(want) {
		t.Fatalf("dfs -cat read %d bytes, want %d", len(got), len(want))
	}
	if n := shortCircuitReads(t, out.String()); n == 0 {
		t.Fatal("the DataNode served no short-circuit read")
	}
}

// shortCircuitReads is the short-circuit reads of the first live DataNode
// of the NameNode whose web address `strata local` printed.
func shortCircuitReads(t *testing.T, listing string) int64 {
	t.Helper()
	m := regexp.MustCompile(`NameNode web +(http://[0-9.:]+)/`).FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("no NameNode web address in:\n%s", listing)
	}
	var jmx struct {
		Beans []map[string]any `json:"beans"`
	}
	getJSON(t, m[1]+"/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo", &jmx)
	var live map[string]struct {
		InfoAddr string `json:"infoAddr"`
	}
	for _, b := range jmx.Beans {
		if s, ok := b["LiveNodes"].(string); ok {
			if err := json.Unmarshal([]byte(s), &live); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, d := range live {
		var st struct {
			ShortCircuit int64 `json:"shortCircuitReads"`
		}
		getJSON(t, "http://"+d.InfoAddr+"/status", &st)
		return st.ShortCircuit
	}
	t.Fatalf("no live DataNode in %v", jmx.Beans)
	return 0
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

// localShortCircuit turns short-circuit reads on unless the configuration
// chose otherwise (its own values, read back from the config directory
// on a restart, are no choice), the path is too long, or a directory on
// it could let another user replace the socket.
func TestLocalShortCircuitKeys(t *testing.T) {
	dir := t.TempDir()
	want := filepath.Join(dir, "run", "dn_PORT.sock")
	keys := localShortCircuit(conf.New(), dir)
	if keys["dfs.domain.socket.path"] != want || keys["dfs.client.read.shortcircuit"] != "true" {
		t.Fatalf("default: %v", keys)
	}
	os.WriteFile(filepath.Join(dir, "run", "dn1234.sock"), nil, 0o644)
	own := conf.New()
	for k, v := range keys {
		own.Set(k, v)
	}
	if localShortCircuit(own, dir) == nil {
		t.Error("the cluster's own keys read back turned it off")
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "dn1234.sock")); err == nil {
		t.Error("a stale socket file was left")
	}
	for k, v := range map[string]string{"dfs.domain.socket.path": "/var/run/dn_PORT", "dfs.client.read.shortcircuit": "false"} {
		c := conf.New()
		c.Set(k, v)
		if got := localShortCircuit(c, dir); got != nil {
			t.Errorf("%s=%s: %v", k, v, got)
		}
	}
	long := filepath.Join(dir, strings.Repeat("d", 100))
	if got := localShortCircuit(conf.New(), long); got != nil {
		t.Errorf("a %d-byte socket path: %v", len(long), got)
	}
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if got := localShortCircuit(conf.New(), open); got != nil {
		t.Errorf("under a world-writable directory: %v", got)
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	if got := localShortCircuit(conf.New(), open); got == nil {
		t.Error("under a sticky world-writable directory (as /tmp): off")
	}
}

// localDropBehind turns the DataNodes' drop-behind on unless the
// configuration sets the key (either way).
func TestLocalDropBehind(t *testing.T) {
	if !localDropBehind(conf.New()) {
		t.Error("default: off")
	}
	for _, v := range []string{"false", "true"} {
		c := conf.New()
		c.Set(dropBehindKey, v)
		if localDropBehind(c) {
			t.Errorf("%s=%s set: strata local overrides it", dropBehindKey, v)
		}
	}
}
