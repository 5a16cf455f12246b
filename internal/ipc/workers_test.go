package ipc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// A call never waits for a worker: with every worker blocked, the next
// call still runs.
func TestWorkerPoolNeverWaits(t *testing.T) {
	p := newWorkerPool(2)
	defer p.close()
	release := make(chan struct{})
	var started sync.WaitGroup
	for i := 0; i < 5; i++ {
		started.Add(1)
		p.run(func() { started.Done(); <-release })
	}
	started.Wait() // five blocked calls on a pool keeping two idle
	ran := make(chan struct{})
	p.run(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a call waited for a busy worker")
	}
	close(release)
}

// Finished workers wait for work up to maxIdle; close lets them go.
func TestWorkerPoolIdleBound(t *testing.T) {
	p := newWorkerPool(3)
	release := make(chan struct{})
	var started sync.WaitGroup
	for i := 0; i < 10; i++ {
		started.Add(1)
		p.run(func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	waitFor(t, "idle workers to settle at the bound", func() bool { return p.idle.Load() == 3 })
	// Idle workers take the next calls.
	var done sync.WaitGroup
	for i := 0; i < 3; i++ {
		done.Add(1)
		p.run(done.Done)
	}
	done.Wait()
	if n := p.idle.Load(); n > 3 {
		t.Fatalf("%d idle workers, bound 3", n)
	}
	p.close()
	waitFor(t, "idle workers to exit after close", func() bool { return p.idle.Load() == 0 })
	ran := make(chan struct{})
	p.run(func() { close(ran) }) // still runs after close
	<-ran
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Pooled frame buffers (both sides) and shared client ids never mix up
// calls: concurrent calls of sizes on both sides of the pooled-buffer
// bound, over a few connections, each get their own answer.
func TestPooledBuffersKeepCallsApart(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	clients := []*Client{newTestClient(t, addr, "a"), newTestClient(t, addr, "b"), newTestClient(t, addr, "c")}
	var wg sync.WaitGroup
	for g := 0; g < 24; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			c := clients[g%len(clients)]
			for i := 0; i < 60; i++ {
				size := r.IntN(2 * 1024)
				if i%10 == 0 {
					size = maxPooledFrame - 64 + r.IntN(128) // around the bound
				}
				want := fmt.Sprintf("%d/%d/", g, i) + strings.Repeat(string(rune('a'+r.IntN(26))), size)
				var resp ipcpb.UserInformationProto
				if err := c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String(want)}, &resp); err != nil {
					t.Error(err)
					return
				}
				if resp.GetEffectiveUser() != want || resp.GetRealUser() != c.cfg.User {
					t.Errorf("call %d/%d: answer of %d bytes for a request of %d, user %q", g, i, len(resp.GetEffectiveUser()), len(want), resp.GetRealUser())
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// An Inline method runs on its connection's reader: even one that wrongly
// blocks holds up only that connection, never another client's calls; and
// wrappers drop the mark.
func TestInlineMethodStallsOnlyItsConnection(t *testing.T) {
	s := NewServer(ServerConfig{})
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(1)
	echoM := Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
		return req, nil
	}).Inline()
	s.Register(testProtocol, map[string]Method{
		"echo": echoM,
		"stuck": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			entered.Done()
			<-release
			return req, nil
		}).Inline(),
	})
	if echoM.Guard(func(context.Context) error { return nil }).inline {
		t.Error("Guard kept the Inline mark")
	}
	if echoM.Around(func(ctx context.Context, req proto.Message, next func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error) {
		return next(ctx, req)
	}).inline {
		t.Error("Around kept the Inline mark")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	a := newTestClient(t, ln.Addr().String(), "a")
	b := newTestClient(t, ln.Addr().String(), "b")
	stuck := make(chan error, 1)
	go func() {
		var resp ipcpb.UserInformationProto
		stuck <- a.Call(context.Background(), "stuck", &ipcpb.UserInformationProto{EffectiveUser: proto.String("x")}, &resp)
	}()
	entered.Wait()
	for i := 0; i < 20; i++ {
		echo(t, b, fmt.Sprint("other connection ", i)) // answered while a's reader is stuck
	}
	close(release)
	if err := <-stuck; err != nil {
		t.Fatal(err)
	}
	echo(t, a, "after") // and a's connection goes on
}

// A panic before the handler runs (here in the request's construction,
// as in its decoding or authorization) is the call's error: the call's
// server-wide slot is released, on a worker and on the reader alike, and
// the daemon goes on.
func TestPanicBeforeHandlerReleasesSlot(t *testing.T) {
	s := NewServer(ServerConfig{MaxInFlight: 2})
	bad := Method{
		newRequest: func() proto.Message { panic("no request type") },
		handle:     func(context.Context, proto.Message) (proto.Message, error) { return nil, nil },
	}
	s.Register(testProtocol, map[string]Method{
		"bad":  bad,
		"ibad": bad.Inline(),
		"echo": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			return req, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	c := newTestClient(t, ln.Addr().String(), "a")
	for i := 0; i < 5; i++ {
		for _, m := range []string{"bad", "ibad"} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := c.Call(ctx, m, &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
			cancel()
			var re *RemoteError
			if !errors.As(err, &re) || re.Fatal || !strings.Contains(re.Message, "internal error in "+m) {
				t.Fatalf("%s call %d: got %v, want the panic as the call's error", m, i, err)
			}
		}
	}
	// Ten panicking calls on a server of two slots: none leaked.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var resp ipcpb.UserInformationProto
	if err := c.Call(ctx, "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String("after")}, &resp); err != nil {
		t.Fatalf("a call after the panics: %v", err)
	}
}

// Under SASL wrapping the reader knows what is buffered: unwrapped bytes
// count for a chunk's read (no stall deadline needed), and bytes of a
// next WRAP message in the connection's buffer mean a next request is
// arriving (an Inline call then goes to a worker, as without wrapping).
func TestSASLReaderBuffered(t *testing.T) {
	under := bufio.NewReader(strings.NewReader("next wrapped message"))
	r := &saslReader{under: under}
	if buffered(r, 1) || arriving(r) {
		t.Fatal("empty saslReader reports buffered input")
	}
	r.buf.Reset([]byte("0123456789"))
	if !buffered(r, 10) || buffered(r, 11) || !arriving(r) {
		t.Fatalf("saslReader holding 10 unwrapped bytes: buffered(10)=%v buffered(11)=%v arriving=%v", buffered(r, 10), buffered(r, 11), arriving(r))
	}
	r.buf.Reset(nil)
	under.Peek(1) // the connection's buffer fills
	if buffered(r, 1) || !arriving(r) {
		t.Fatalf("bytes only beneath: buffered(1)=%v (want false: they may be an incomplete WRAP message), arriving=%v (want true)", buffered(r, 1), arriving(r))
	}
}
