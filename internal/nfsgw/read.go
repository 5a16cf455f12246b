package nfsgw

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync"
	"time"

	nfs "github.com/willscott/go-nfs"

	"github.com/stratafs/strata/hdfs"
)

// Reads. NFS has no open or close: every READ names a handle, an offset
// and a count, and clients read a file front to back in rtmax pieces. The
// gateway keeps one HDFS reader per (user, inode) for a few seconds, so a
// sequential read streams from one DataNode connection per block instead
// of reconnecting for every READ; a READ elsewhere in the file seeks.

const (
	readerIdle = 5 * time.Second
	maxReaders = 256
)

type readerKey struct {
	user string
	id   uint64
}

type cachedReader struct {
	mu      sync.Mutex // held while a READ uses the reader
	r       *hdfs.FileReader
	lastUse time.Time
}

type readers struct {
	mu sync.Mutex
	m  map[readerKey]*cachedReader
}

func newReaders() *readers { return &readers{m: map[readerKey]*cachedReader{}} }

// open returns a file for READ of p as u, reusing a cached reader when the
// file has not grown since it was opened.
func (rs *readers) open(u *userFS, p string) (*readFile, error) {
	st, err := u.stat(p)
	if err != nil {
		return nil, err
	}
	key := readerKey{u.user, st.FileID}
	rs.mu.Lock()
	cr := rs.m[key]
	if cr != nil && cr.mu.TryLock() {
		if cr.r.Length() == st.Length {
			cr.lastUse = time.Now()
			rs.mu.Unlock()
			return &readFile{name: p, cr: cr}, nil
		}
		delete(rs.m, key)
		cr.r.Close()
		cr.mu.Unlock()
		cr = nil
	}
	rs.mu.Unlock()
	r, err := u.c.OpenFile(u.g.ctx, p)
	if err != nil {
		return nil, osErr("open", p, err)
	}
	nc := &cachedReader{r: r, lastUse: time.Now()}
	nc.mu.Lock()
	rs.mu.Lock()
	if cr == nil && len(rs.m) < maxReaders {
		if _, taken := rs.m[key]; !taken {
			rs.m[key] = nc
			rs.mu.Unlock()
			return &readFile{name: p, cr: nc}, nil
		}
	}
	rs.mu.Unlock()
	// Busy or full: a reader for this READ alone.
	return &readFile{name: p, cr: nc, own: true}, nil
}

// expire closes readers idle for readerIdle, and all of them when all is set.
func (rs *readers) expire(all bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for k, cr := range rs.m {
		if !cr.mu.TryLock() {
			continue
		}
		if all || time.Since(cr.lastUse) > readerIdle {
			delete(rs.m, k)
			cr.r.Close()
		}
		cr.mu.Unlock()
	}
}

// readFile serves one READ; Close hands the reader back.
type readFile struct {
	name string
	cr   *cachedReader
	own  bool // not in the cache: close the reader on Close
	unsupportedFile
}

func (f *readFile) Name() string { return f.name }

// ReadAt reads sequentially from off, seeking only when off is not where
// the reader stands.
func (f *readFile) ReadAt(p []byte, off int64) (int, error) {
	r := f.cr.r
	if pos, _ := r.Seek(0, io.SeekCurrent); pos != off {
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
	}
	n, err := io.ReadFull(r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

func (f *readFile) Close() error {
	if f.own {
		err := f.cr.r.Close()
		f.cr.mu.Unlock()
		return err
	}
	f.cr.lastUse = time.Now()
	f.cr.mu.Unlock()
	return nil
}

// read serves a READ call's arguments (RFC 1813 READ3args) into a pooled
// buffer: READ3res with the file's attributes and up to maxRead bytes.
func (g *Gateway) read(cred credential, args []byte) []byte {
	r := xdrReader{b: args}
	fh := r.opaque(64)
	off := r.u64()
	count := r.u32()
	if r.err != nil {
		return readFail(nfs.NFSStatusInval)
	}
	id, err := decodeHandle(fh)
	if err != nil {
		return readFail(nfs.NFSStatusBadHandle)
	}
	u, err := g.fsFor(cred.user)
	if err != nil {
		return readFail(nfs.NFSStatusServerFault)
	}
	p := "/"
	if id != rootID {
		if p, err = g.pathOf(u, id); err != nil {
			return readFail(nfs.NFSStatusStale)
		}
	}
	st, err := u.stat(p)
	if err != nil {
		return readFail(statusOf(err, nfs.NFSStatusNoEnt))
	}
	if st.IsDir {
		return readFail(nfs.NFSStatusIsDir)
	}
	n := int64(min(count, maxRead))
	if off >= uint64(st.Length) { // off may be past what an int64 holds
		n = 0
	} else {
		n = min(n, st.Length-int64(off))
	}
	var pre bytes.Buffer
	binary.Write(&pre, binary.BigEndian, uint32(nfs.NFSStatusOk))
	nfs.WritePostOpAttrs(&pre, nfs.ToFileAttribute(g.info(st), p))
	binary.Write(&pre, binary.BigEndian, [3]uint32{uint32(n), 0, uint32(n)}) // count, eof, data length
	head := pre.Len()
	body := getBuf(head + int(n) + 3)
	copy(body, pre.Bytes())
	got := 0
	if n > 0 {
		u.g.writes.flushPath(p)
		f, err := g.readers.open(u, p)
		if err != nil {
			putBuf(body)
			return readFail(statusOf(err, nfs.NFSStatusNoEnt))
		}
		got, err = f.ReadAt(body[head:head+int(n)], int64(off))
		f.Close()
		if err != nil && err != io.EOF {
			g.log.Error("nfs3: read", "path", p, "user", cred.user, "offset", off, "err", err)
			putBuf(body)
			return readFail(nfs.NFSStatusIO)
		}
	}
	eof := uint32(0)
	if off+uint64(got) >= uint64(st.Length) {
		eof = 1
	}
	binary.BigEndian.PutUint32(body[head-12:], uint32(got))
	binary.BigEndian.PutUint32(body[head-8:], eof)
	binary.BigEndian.PutUint32(body[head-4:], uint32(got))
	end := head + (got+3)&^3
	clear(body[head+got : end])
	return body[:end]
}

// readFail is READ3resfail without attributes, in a pooled buffer.
func readFail(status nfs.NFSStatus) []byte {
	b := getBuf(8)
	binary.BigEndian.PutUint32(b, uint32(status))
	binary.BigEndian.PutUint32(b[4:], 0)
	return b
}
