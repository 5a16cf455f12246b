package namenode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/webui"
)

// fsckOptions are the flags of `fsck PATH [-files [-blocks [-locations]]]`.
type fsckOptions struct {
	files, blocks, locations bool
}

type fsckTotals struct {
	dirs, files, blocks, size               int64
	minRepl, overRepl, underRepl, misplaced int64
	missing, corrupt, missingReplicas       int64
	replicaSum                              int64
	corruptFiles                            int64
}

// fsckChunk is how many inodes fsck examines per hold of the namespace
// lock; between chunks it releases the lock and writes what it found.
const fsckChunk = 512

// fsck writes Hadoop's fsck report for the tree under p. It walks the tree
// in chunks of fsckChunk inodes under the read lock, formatting each
// chunk's lines into a buffer, and writes the buffer with the lock
// released, so a client that reads slowly (or not at all) holds up no one
// else. Each directory's children are taken as they are when it is
// reached; an inode deleted before its turn is skipped. A write error
// (the client went away, or timed out) ends the walk.
func (s *Namesystem) fsck(w io.Writer, p, user, from string, o fsckOptions) bool {
	start := time.Now()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "FSCK started by %s (auth:SIMPLE) from /%s for path %s at %s\n", user, from, p, start.Format("Mon Jan 02 15:04:05 MST 2006"))
	s.mu.RLock()
	n := s.tree.Lookup(p)
	if n == nil {
		s.mu.RUnlock()
		fmt.Fprintf(&buf, "Cannot find path %s\n\nFSCK ended at %s in %d milliseconds\n\nFsck on path '%s' FAILED\n",
			p, time.Now().Format("Mon Jan 02 15:04:05 MST 2006"), time.Since(start).Milliseconds(), p)
		w.Write(buf.Bytes())
		return false
	}
	var t fsckTotals
	if o.files {
		buf.WriteByte('\n')
	}
	stack := []*namespace.Inode{n}
	for len(stack) > 0 {
		for i := 0; i < fsckChunk && len(stack) > 0; i++ {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x != n && s.tree.Inode(x.ID) != x {
				continue // deleted since its directory was listed
			}
			if !x.IsDir {
				s.fsckFile(&buf, x, o, &t)
				continue
			}
			t.dirs++
			if o.files {
				fmt.Fprintf(&buf, "%s <dir>\n", x.Path())
			}
			for j := len(x.Children) - 1; j >= 0; j-- {
				stack = append(stack, x.Children[j])
			}
		}
		if len(stack) == 0 {
			break // the summary is made under this hold of the lock
		}
		s.mu.RUnlock()
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		if err != nil {
			return false
		}
		s.mu.RLock()
	}
	healthy := s.fsckSummary(&buf, p, start, &t)
	s.mu.RUnlock()
	w.Write(buf.Bytes())
	return healthy
}

// fsckSummary writes the report's totals. Lock held.
func (s *Namesystem) fsckSummary(w io.Writer, p string, start time.Time, t *fsckTotals) bool {
	healthy := t.missing == 0 && t.corrupt == 0
	status := "HEALTHY"
	if !healthy {
		status = "CORRUPT"
	}
	live := len(s.bm.Live())
	pct := func(v int64) float64 {
		if t.blocks == 0 {
			return 0
		}
		return float64(v) * 100 / float64(t.blocks)
	}
	avgBlock, avgRepl := int64(0), 0.0
	if t.blocks > 0 {
		avgBlock = t.size / t.blocks
		avgRepl = float64(t.replicaSum) / float64(t.blocks)
	}
	fmt.Fprintf(w, "\nStatus: %s\n", status)
	fmt.Fprintf(w, " Number of data-nodes:\t%d\n Number of racks:\t\t1\n Total dirs:\t\t\t%d\n Total symlinks:\t\t0\n\n", live, t.dirs)
	fmt.Fprintf(w, "Replicated Blocks:\n")
	fmt.Fprintf(w, " Total size:\t%d B\n Total files:\t%d\n Total blocks (validated):\t%d (avg. block size %d B)\n", t.size, t.files, t.blocks, avgBlock)
	if t.corruptFiles > 0 {
		fmt.Fprintf(w, "  ********************************\n  UNDER MIN REPL'D BLOCKS:\t%d (%.1f %%)\n  CORRUPT FILES:\t%d\n  MISSING BLOCKS:\t%d\n  ********************************\n", t.missing+t.corrupt, pct(t.missing+t.corrupt), t.corruptFiles, t.missing)
	}
	fmt.Fprintf(w, " Minimally replicated blocks:\t%d (%.1f %%)\n", t.minRepl, pct(t.minRepl))
	fmt.Fprintf(w, " Over-replicated blocks:\t%d (%.1f %%)\n", t.overRepl, pct(t.overRepl))
	fmt.Fprintf(w, " Under-replicated blocks:\t%d (%.1f %%)\n", t.underRepl, pct(t.underRepl))
	fmt.Fprintf(w, " Mis-replicated blocks:\t\t%d (%.1f %%)\n", t.misplaced, pct(t.misplaced))
	fmt.Fprintf(w, " Default replication factor:\t%d\n", s.cfg.defaultReplication)
	fmt.Fprintf(w, " Average block replication:\t%.1f\n", avgRepl)
	fmt.Fprintf(w, " Missing blocks:\t\t%d\n Corrupt blocks:\t\t%d\n", t.missing, t.corrupt)
	fmt.Fprintf(w, " Missing replicas:\t\t%d (%.1f %%)\n", t.missingReplicas, pct(t.missingReplicas))
	fmt.Fprintf(w, " Blocks queued for replication:\t%d\n", s.bm.Pending())
	fmt.Fprintf(w, "\nFSCK ended at %s in %d milliseconds\n\n", time.Now().Format("Mon Jan 02 15:04:05 MST 2006"), time.Since(start).Milliseconds())
	fmt.Fprintf(w, "The filesystem under path '%s' is %s\n", p, status)
	return healthy
}

func (s *Namesystem) fsckFile(w io.Writer, x *namespace.Inode, o fsckOptions, t *fsckTotals) {
	t.files++
	size := x.Length()
	t.size += size
	var lines []string
	var problems []string
	fileBad := false
	want := int(x.Replication())
	types := x.EffectivePolicy()
	for i, b := range x.Blocks() {
		t.blocks++
		good := blockmgmt.GoodReplicas(b)
		t.replicaSum += int64(len(good))
		corrupt := 0
		for _, r := range b.Replicas {
			if r.Corrupt {
				corrupt++
			}
		}
		name := fmt.Sprintf("%s:blk_%d_%d", s.blockPoolID, b.ID, b.GenStamp)
		uc := x.UC() != nil && i == len(x.Blocks())-1
		switch {
		case uc:
			// Being written: not judged.
		case len(good) == 0 && corrupt > 0:
			t.corrupt++
			fileBad = true
			problems = append(problems, fmt.Sprintf("\n%s: CORRUPT blockpool %s block blk_%d\n", x.Path(), s.blockPoolID, b.ID))
		case len(good) == 0 && b.NumBytes > 0:
			t.missing++
			fileBad = true
			problems = append(problems, fmt.Sprintf("\n%s: MISSING %d blocks of total size %d B.", x.Path(), 1, b.NumBytes))
		default:
			if len(good) >= s.cfg.minReplication {
				t.minRepl++
			}
			if len(good) > want {
				t.overRepl++
			}
			if len(good) < want {
				t.underRepl++
				t.missingReplicas += int64(want - len(good))
				problems = append(problems, fmt.Sprintf(" Under replicated %s. Target Replicas is %d but found %d live replica(s), 0 decommissioned replica(s), 0 decommissioning replica(s).", name, want, len(good)))
			}
			if extra, _ := blockmgmt.Misplaced(good, types.ChooseTypes(want)); len(extra) > 0 && len(good) >= want {
				t.misplaced++
			}
		}
		if o.blocks {
			line := fmt.Sprintf("%d. %s len=%d Live_repl=%d", i, name, b.NumBytes, len(good))
			if o.locations {
				var locs []string
				for _, r := range blockmgmt.SortedReplicas(b) {
					if r.Storage.DN.Dead {
						continue
					}
					tag := ""
					if r.Corrupt {
						tag = "(CORRUPT)"
					}
					locs = append(locs, fmt.Sprintf("DatanodeInfoWithStorage[%s,%s,%s]%s", r.Storage.DN.XferAddr(), r.Storage.ID, r.Storage.Type, tag))
				}
				line += "  [" + strings.Join(locs, ", ") + "]"
			}
			lines = append(lines, line)
		}
	}
	if fileBad {
		t.corruptFiles++
	}
	if !o.files && !fileBad {
		return
	}
	state := "  OK"
	if len(problems) > 0 {
		state = strings.Join(problems, "")
	}
	if x.UC() != nil {
		fmt.Fprintf(w, "%s %d bytes, replicated: replication=%d, %d block(s), OPENFORWRITE: %s\n", x.Path(), size, want, len(x.Blocks()), state)
	} else {
		fmt.Fprintf(w, "%s %d bytes, replicated: replication=%d, %d block(s): %s\n", x.Path(), size, want, len(x.Blocks()), state)
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
	}
}

// serveFsck is the /fsck endpoint `strata fsck` reads, as Hadoop's
// NameNode serves it: ?path=/x&files=1&blocks=1&locations=1. The user is
// user.name (Hadoop's simple authentication), else ugi (which Hadoop's
// fsck client sends), else dr.who. With permissions enabled only a
// superuser may run it, as Hadoop's NamenodeFsck requires: anyone else
// gets 403 with the AccessControlException's message and no path.
func (n *NameNode) serveFsck(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := q.Get("path")
	if p == "" {
		p = "/"
	}
	o := fsckOptions{files: q.Get("files") == "1", blocks: q.Get("blocks") == "1", locations: q.Get("locations") == "1"}
	user := webui.ParamUser(r)
	if _, secure := httpauth.User(r.Context()); !secure && user == "" {
		user = q.Get("ugi")
	}
	if user == "" {
		user = "dr.who"
	}
	from := r.RemoteAddr
	if i := strings.LastIndexByte(from, ':'); i > 0 {
		from = from[:i]
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ctx := ipc.WithCaller(r.Context(), &ipc.Caller{User: user, Protocol: "http"})
	if err := n.ns.checker(ctx).Superuser(""); err != nil && n.cfg.Permissions {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "%v\n\nFsck on path '%s' FAILED\n", ipcMessage(err), p)
		return
	}
	n.ns.fsck(&deadlineWriter{w: w, rc: http.NewResponseController(w)}, p, user, from, o)
}

// ipcMessage is an IPC error's message without its exception class.
func ipcMessage(err error) string {
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// deadlineWriter gives each write of a streamed response its own
// httpWriteTimeout, so a long report is not cut by the server's
// WriteTimeout while a client that stops reading still loses the
// connection.
type deadlineWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.rc.SetWriteDeadline(time.Now().Add(httpWriteTimeout))
	n, err := d.w.Write(b)
	if err == nil {
		err = d.rc.Flush()
	}
	return n, err
}
