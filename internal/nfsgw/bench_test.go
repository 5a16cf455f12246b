package nfsgw_test

import (
	"sync"
	"testing"
)

// The benchmarks write b.N MiB through a gateway on an in-process cluster
// (NFS client, gateway, NameNode and DataNode all in this process).

// benchMount returns a mount as the superuser of a fresh cluster whose
// files have 128 MiB blocks, and a MiB to write.
func benchMount(b *testing.B) (*mount, []byte) {
	e := newEnv(b)
	e.blockSize = 128 << 20
	addr, _ := e.gateway()
	return e.mount(addr, uidRoot), randomBytes(1<<20, 9)
}

// BenchmarkWriteFileSync uses the Go client's File.Write: 1 MiB FILE_SYNC
// WRITEs one at a time, COMMIT on Close.
func BenchmarkWriteFileSync(b *testing.B) {
	m, chunk := benchMount(b)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	f, err := m.OpenFile("/bench", 0o644)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteUnstable sends 1 MiB UNSTABLE WRITEs with eight in
// flight, then COMMIT, as a kernel client does.
func BenchmarkWriteUnstable(b *testing.B) {
	m, chunk := benchMount(b)
	fh, err := m.Create("/bench", 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1 << 20)
	b.ResetTimer()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range b.N {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if st, _ := m.write(b, fh, uint64(i)<<20, chunk, 0); st != 0 {
				b.Errorf("WRITE: status %d", st)
			}
		}()
	}
	wg.Wait()
	if st := m.commit(b, fh); st != 0 {
		b.Fatalf("COMMIT: status %d", st)
	}
}
