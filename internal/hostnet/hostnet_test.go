package hostnet

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A network's hosts: own namespaces and addresses, hosts files naming
// every host, links that can be shaped and cut; Close leaves nothing.
func TestNetwork(t *testing.T) {
	n, err := New()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			n.Close()
		}
	}()
	a, err := n.AddHost("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.AddHost("b", 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.IP == b.IP || !strings.HasSuffix(a.IP, ".2") || n.Host(ClientHost) == nil {
		t.Fatalf("addresses %s %s", a.IP, b.IP)
	}
	if _, err := n.AddHost("c", 255); err == nil {
		t.Error("octet 255 accepted")
	}
	// a's hosts file was rewritten when b came: it names b.
	hosts, err := os.ReadFile(filepath.Join(netnsEtc, a.NS, "hosts"))
	if err != nil || !strings.Contains(string(hosts), b.IP+"\tb\n") || !strings.Contains(string(hosts), n.Host(ClientHost).IP+"\tclient\n") {
		t.Errorf("a's hosts file: %v\n%s", err, hosts)
	}
	// Programs on a see only its address; the name b resolves there.
	w := n.Wrap("a")
	out, err := exec.Command(w[0], append(w[1:], "ip", "-4", "-o", "addr", "show", "dev", "eth0")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), a.IP+"/24") {
		t.Errorf("a's eth0: %v %s", err, out)
	}
	out, err = exec.Command(w[0], append(w[1:], "getent", "hosts", "b")...).CombinedOutput()
	if err == nil && !strings.Contains(string(out), b.IP) {
		t.Errorf("b resolves on a to %s", out)
	}
	if _, err := exec.LookPath("tc"); err == nil {
		if err := n.Shape("a", 100_000_000); err != nil {
			t.Error(err)
		}
		q, _ := exec.Command("tc", "qdisc", "show", "dev", a.Veth).CombinedOutput()
		if !strings.Contains(string(q), "tbf") || !strings.Contains(string(q), "100Mbit") {
			t.Errorf("a's veth qdisc: %s", q)
		}
		if err := n.Shape("a", 0); err != nil {
			t.Error(err)
		}
	}
	if err := n.Shape(ClientHost, 1e6); err == nil {
		t.Error("the client host was shaped")
	}
	if err := n.Cut("a", "b"); err != nil {
		t.Fatal(err)
	}
	r, _ := exec.Command("ip", "-n", a.NS, "route", "show").CombinedOutput()
	if !strings.Contains(string(r), "unreachable "+b.IP) {
		t.Errorf("a's routes after the cut: %s", r)
	}
	n.Heal()
	r, _ = exec.Command("ip", "-n", a.NS, "route", "show").CombinedOutput()
	if strings.Contains(string(r), "unreachable") {
		t.Errorf("a's routes after healing: %s", r)
	}
	n.Close()
	closed = true
	list, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	if strings.Contains(string(list), a.NS) || strings.Contains(string(list), b.NS) {
		t.Errorf("namespaces left: %s", list)
	}
	if _, err := os.Stat(filepath.Join(netnsEtc, a.NS)); !os.IsNotExist(err) {
		t.Errorf("hosts file directory left: %v", err)
	}
}

// A CPU group: the quota is written, the wrapper puts a program in it,
// Stat reads it, Close removes it.
func TestCPUGroups(t *testing.T) {
	g, err := NewCPUGroups()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	dirs, err := g.Group("h", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	quota := filepath.Join(dirs[0], "cpu.cfs_quota_us")
	want := "50000"
	if g.v2 {
		quota, want = filepath.Join(dirs[0], "cpu.max"), "50000 100000"
	}
	if b, err := os.ReadFile(quota); err != nil || strings.TrimSpace(string(b)) != want {
		t.Errorf("%s = %q, %v; want %q", quota, b, err, want)
	}
	if _, err := g.Group("bad", 0); err == nil {
		t.Error("a share of 0 accepted")
	}
	w := Wrap(dirs)
	if out, err := exec.Command(w[0], append(w[1:], "true")...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, _, ok := g.Stat("h"); !ok {
		t.Error("no stat for h")
	}
	g.Close()
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", d, err)
		}
	}
}
