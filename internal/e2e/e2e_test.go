// Package e2e runs the real strata binary as separate processes: the place
// where crashes, kill -9 and restarts are real.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var strataBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	strataBin = filepath.Join(dir, "strata")
	out, err := exec.Command("go", "build", "-o", strataBin, "github.com/stratafs/strata/cmd/strata").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building strata: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freePort returns a loopback address with a port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// nameNode is a NameNode process with its storage and addresses.
type nameNode struct {
	t        *testing.T
	dir      string
	rpc      string
	http     string
	cmd      *exec.Cmd
	log      *syncBuffer
	logsSeen []string
	// extra are more generic options for the NameNode process.
	extra []string
}

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

func newNameNode(t *testing.T) *nameNode {
	t.Helper()
	nn := &nameNode{t: t, dir: t.TempDir(), rpc: freePort(t), http: freePort(t)}
	out, err := exec.Command(strataBin, nn.args("namenode", "-format")...).CombinedOutput()
	if err != nil {
		t.Fatalf("namenode -format: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "successfully formatted") {
		t.Fatalf("namenode -format said: %s", out)
	}
	t.Cleanup(func() { nn.kill() })
	return nn
}

func (nn *nameNode) args(extra ...string) []string {
	args := append([]string{
		"-D", "dfs.namenode.name.dir=" + filepath.Join(nn.dir, "name"),
		"-D", "dfs.namenode.rpc-address=" + nn.rpc,
		"-D", "dfs.namenode.http-address=" + nn.http,
	}, nn.extra...)
	return append(args, extra...)
}

// start runs the NameNode and waits until its RPC port answers.
func (nn *nameNode) start() {
	nn.t.Helper()
	nn.log = &syncBuffer{}
	nn.cmd = exec.Command(strataBin, nn.args("namenode")...)
	nn.cmd.Stdout = nn.log
	nn.cmd.Stderr = nn.log
	if err := nn.cmd.Start(); err != nil {
		nn.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", nn.rpc, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		if nn.cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	nn.t.Fatalf("namenode did not start listening on %s; log:\n%s", nn.rpc, nn.log.String())
}

// kill sends SIGKILL and waits for the process.
func (nn *nameNode) kill() {
	if nn.cmd == nil || nn.cmd.Process == nil {
		return
	}
	nn.cmd.Process.Kill()
	nn.cmd.Wait()
	nn.logsSeen = append(nn.logsSeen, nn.log.String())
	nn.cmd = nil
}

// stop sends SIGTERM and waits for a clean exit.
func (nn *nameNode) stop() {
	nn.t.Helper()
	nn.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- nn.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			nn.t.Errorf("namenode exited with %v; log:\n%s", err, nn.log.String())
		}
	case <-time.After(30 * time.Second):
		nn.cmd.Process.Kill()
		nn.t.Fatalf("namenode did not stop on SIGINT")
	}
	nn.logsSeen = append(nn.logsSeen, nn.log.String())
	nn.cmd = nil
}

// strata runs the binary as a client of this NameNode.
func (nn *nameNode) strata(user string, args ...string) (string, string, int) {
	nn.t.Helper()
	cmd := exec.Command(strataBin, append([]string{"-fs", "hdfs://" + nn.rpc}, args...)...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+user)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		nn.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
