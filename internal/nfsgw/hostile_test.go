package nfsgw_test

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/nfsgw"
)

// A write that the NameNode would refuse must not touch another user's
// open stream: alice's acknowledged out-of-order UNSTABLE writes survive
// bob's refused 1-byte write to her file.
func TestRefusedWriteKeepsOthersBufferedWrites(t *testing.T) {
	e := newEnv(t)
	addr, _ := e.gateway()
	root := e.mount(addr, uidRoot)
	if _, err := root.Mkdir("/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	alice := e.mount(addr, uidAlice)
	fh, err := alice.Create("/shared/log", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(8192, 7)
	// The second half first: buffered behind a gap, acknowledged.
	if st, _ := alice.write(t, fh, 4096, data[4096:], 0); st != 0 {
		t.Fatalf("alice's out-of-order UNSTABLE write: status %d", st)
	}
	bob := e.mount(addr, uidBob)
	if st, _ := bob.write(t, fh, 0, []byte("x"), 0); st != 13 {
		t.Fatalf("bob's WRITE to alice's 0644 file: status %d, want NFS3ERR_ACCES (13)", st)
	}
	if st, _ := alice.write(t, fh, 0, data[:4096], 0); st != 0 {
		t.Fatalf("alice fills the gap: status %d", st)
	}
	if st := alice.commit(t, fh); st != 0 {
		t.Fatalf("alice's COMMIT after bob's refused write: status %d (her buffered writes were dropped)", st)
	}
	if got := e.hdfsRead("/shared/log"); !bytes.Equal(got, data) {
		t.Fatalf("alice's file has %d bytes, want her %d", len(got), len(data))
	}
}

func TestParseExports(t *testing.T) {
	lookup := func(a string) ([]string, error) {
		if a == "10.0.0.7" {
			return []string{"build7.example.com."}, nil
		}
		return nil, nil
	}
	for _, tc := range []struct {
		spec        string
		addr        string
		allowed, rw bool
	}{
		{"* rw", "192.0.2.1", true, true},
		{"*", "192.0.2.1", true, false},
		{"127.0.0.1 rw", "127.0.0.1", true, true},
		{"127.0.0.1 rw", "127.0.0.2", false, false},
		{"10.0.0.0/8 ro; * rw", "10.9.9.9", true, false},
		{"10.0.0.0/8 ro; * rw", "192.0.2.1", true, true},
		{"build7.example.com rw", "10.0.0.7", true, true},
		{`build\d+\.example\.com rw`, "10.0.0.7", true, true},
		{`build\d+\.example\.com rw`, "10.0.0.8", false, false},
		{"::1 rw", "::1", true, true},
		{"127.0.0.0/8 rw", "::ffff:127.0.0.1", true, true},
	} {
		e, err := nfsgw.ParseExports(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		allowed, rw := e.Access(netip.MustParseAddr(tc.addr), lookup)
		if allowed != tc.allowed || rw != tc.rw {
			t.Errorf("%q for %s: allowed %v rw %v, want %v %v", tc.spec, tc.addr, allowed, rw, tc.allowed, tc.rw)
		}
	}
	for _, bad := range []string{"", " ; ", "* rx", "10.0.0.0/99 rw", "a b c", "(unclosed rw"} {
		if _, err := nfsgw.ParseExports(bad); err == nil {
			t.Errorf("ParseExports(%q) accepted it", bad)
		}
	}
}

// A host not in nfs.exports.allowed.hosts cannot mount; a read-only host
// can read but every change is refused with NFS3ERR_ACCES.
func TestExportsAllowlist(t *testing.T) {
	e := newEnv(t)
	deny, _ := nfsgw.ParseExports("192.0.2.0/24 rw")
	addr, _ := e.gatewayWith(nfsgw.Options{Exports: deny})
	if c, err := nfsclient.Dial(addr, "/", uidRoot, uidRoot); err == nil {
		c.Close()
		t.Fatal("a host outside nfs.exports.allowed.hosts mounted the export")
	}

	ro, _ := nfsgw.ParseExports("127.0.0.0/8 ro")
	rwAddr, _ := e.gateway()
	rw := e.mount(rwAddr, uidRoot)
	fh, err := rw.Create("/kept", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := rw.write(t, fh, 0, []byte("hello"), 2); st != 0 {
		t.Fatalf("write through a read-write export: %d", st)
	}
	roAddr, _ := e.gatewayWith(nfsgw.Options{Exports: ro})
	m := e.mount(roAddr, uidRoot)
	if got := m.readAll(t, "/kept"); string(got) != "hello" {
		t.Fatalf("read through a read-only export: %q", got)
	}
	if _, err := m.Create("/new", 0o644); err == nil {
		t.Fatal("CREATE through a read-only export succeeded")
	}
	if _, err := m.Mkdir("/newdir", 0o755); err == nil {
		t.Fatal("MKDIR through a read-only export succeeded")
	}
	_, kfh, err := m.Lookup("/kept")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := m.write(t, kfh, 5, []byte("!"), 2); st != 13 {
		t.Fatalf("WRITE through a read-only export: status %d, want NFS3ERR_ACCES (13)", st)
	}
	if err := m.Remove("/kept"); err == nil {
		t.Fatal("REMOVE through a read-only export succeeded")
	}
	if got := e.hdfsRead("/kept"); string(got) != "hello" {
		t.Fatalf("file after refused changes: %q", got)
	}
	// The connection is still usable after the refusals.
	if got := m.readAll(t, "/kept"); string(got) != "hello" {
		t.Fatalf("read after refusals: %q", got)
	}
}
