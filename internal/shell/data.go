package shell

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/fs"
)

// errNotSupported is reported for an operation the path's file system
// cannot do (it lacks the optional fs capability).
var errNotSupported = errors.New("Not supported by this file system")

// isLocal reports file:// file systems. Where the local file system lacks
// an optional capability, the shell does what Hadoop's RawLocalFileSystem
// does, directly on the local path.
func isLocal(fsys fs.FileSystem) bool { return fsys.URI().Scheme == "file" }

func osPath(p string) string { return filepath.FromSlash(p) }

// cleanupCtx is for removing what a failed or interrupted command left
// behind: it outlives the command's (possibly cancelled) context briefly.
func (c *cmdCtx) cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(c.ctx), 10*time.Second)
}

// parseCount parses the numeric first argument of -setrep and -truncate
// as Java's Short.parseShort / Long.parseLong: a bad number prints
// Hadoop's warning and then fails as a usage error.
func (c *cmdCtx) parseCount(s string, bits int, warning string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n, nil
	}
	c.sh.Stderr.Write([]byte(c.name + ": " + warning + "\n"))
	var ne *strconv.NumError
	if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		return 0, usageErrorf("Value out of range. Value:\"%s\" Radix:10", s)
	}
	return 0, usageErrorf("For input string: \"%s\"", s)
}

var cmdSetrep = &command{
	name:  "setrep",
	usage: "[-R] [-w] <rep> <path> ...",
	help: `Set the replication level of a file. If <path> is a directory then the command
recursively changes the replication factor of all files under the directory tree
rooted at <path>. The EC files will be ignored here.

-w  It requests that the command waits for the replication to complete. This
    can potentially take a very long time.
-R  It is accepted for backwards compatibility. It has no effect.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 2, unlimited, "R", "w")
		if err != nil {
			return err
		}
		rep, err := c.parseCount(args[0], 16, "Illegal replication, a positive integer expected")
		if err != nil {
			return err
		}
		if rep < 1 {
			return usageErrorf("replication must be >= 1")
		}
		var wait []*item
		c.walk(c.expandAll(args[1:], false, false), true, func(it *item) {
			if it.isDir() || c.ctx.Err() != nil {
				return
			}
			r, ok := it.fsys.(fs.Replicator)
			switch {
			case ok:
				if err := r.SetReplication(c.ctx, it.path, int(rep)); err != nil {
					if c.ctx.Err() == nil {
						c.failPath(it.disp, err)
					}
					return
				}
			case isLocal(it.fsys):
				// Hadoop's local file system accepts any replication and
				// keeps one copy.
			default:
				c.fail(errNotSupported.Error())
				return
			}
			fmt.Fprintf(c.out, "Replication %d set: %s\n", rep, it.disp)
			if o["w"] {
				wait = append(wait, it)
			}
		})
		for _, it := range wait {
			if c.ctx.Err() != nil {
				break
			}
			c.waitReplicated(it, int(rep))
		}
		return nil
	},
}

// setrepDotEvery is how often -setrep -w prints a dot while it waits
// (Hadoop checks, and prints a dot, every 10 s).
var setrepDotEvery = 10 * time.Second

// waitReplicated is -setrep -w for one file: "Waiting for x ... done",
// with a dot for every setrepDotEvery spent waiting.
func (c *cmdCtx) waitReplicated(it *item, rep int) {
	fmt.Fprintf(c.out, "Waiting for %s ...", it.disp)
	c.out.Flush()
	r, ok := it.fsys.(fs.Replicator)
	if !ok { // local: there is nothing to wait for
		fmt.Fprintln(c.out, " done")
		return
	}
	done := make(chan error, 1)
	go func() { done <- r.WaitReplicated(c.ctx, it.path, rep) }()
	warned := it.st.Replication <= rep
	first := time.NewTimer(time.Second)
	defer first.Stop()
	dots := time.NewTicker(setrepDotEvery)
	defer dots.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				if c.ctx.Err() == nil {
					fmt.Fprintln(c.out)
					c.failPath(it.disp, err)
				}
				return
			}
			fmt.Fprintln(c.out, " done")
			return
		case <-first.C:
			if !warned {
				fmt.Fprintln(c.out, "\nWARNING: the waiting time may be long for DECREASING the number of replications.")
				warned = true
			}
		case <-dots.C:
			c.out.WriteString(".")
		}
		c.out.Flush()
	}
}

var cmdChecksum = &command{
	name:  "checksum",
	usage: "[-v] <src> ...",
	help: `Dump checksum information for files that match the file pattern <src> to
stdout. Note that this requires a round-trip to a datanode storing each block of
the file, and thus is not efficient to run on a large number of files. The
checksum of a file depends on its content, block size and the checksum algorithm
and parameters used for creating the file.

-v  Display the block size of the file.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, unlimited, "v")
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			if it.isDir() {
				c.failPath(it.disp, fs.ErrIsDir)
				continue
			}
			// As Hadoop's Display.Checksum: "<path>\t<algorithm>\t<hex>",
			// or "<path>\tNONE" where the file system has no checksums
			// (the local one).
			sum := "NONE"
			if cs, ok := it.fsys.(fs.Checksummer); ok {
				ck, err := cs.FileChecksum(c.ctx, it.path)
				if err != nil {
					c.failPath(it.disp, err)
					continue
				}
				sum = ck.Algorithm + "\t" + hex.EncodeToString(checksumBytes(ck))
			}
			if o["v"] {
				fmt.Fprintf(c.out, "%s\t%s\tBlockSize=%d\n", it.disp, sum, it.st.BlockSize)
			} else {
				fmt.Fprintf(c.out, "%s\t%s\n", it.disp, sum)
			}
		}
		return nil
	},
}

var md5md5crc = regexp.MustCompile(`^MD5-of-(\d+)MD5-of-(\d+)CRC32C?$`)

// checksumBytes is what Hadoop prints for a checksum, its getBytes(): for
// an MD5-of-MD5-of-CRC checksum that is the serialized
// MD5MD5CRC32FileChecksum, bytesPerCRC (4 bytes) and crcPerBlock (8
// bytes) before the MD5 ("000002000000000000000000c168..."). A
// file system that gives the bare 16-byte MD5 gets the two fields from
// the algorithm name.
func checksumBytes(ck fs.FileChecksum) []byte {
	m := md5md5crc.FindStringSubmatch(ck.Algorithm)
	if m == nil || len(ck.Bytes) != md5.Size {
		return ck.Bytes
	}
	crcPerBlock, err1 := strconv.ParseUint(m[1], 10, 64)
	bytesPerCRC, err2 := strconv.ParseUint(m[2], 10, 32)
	if err1 != nil || err2 != nil {
		return ck.Bytes
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(bytesPerCRC))
	b = binary.BigEndian.AppendUint64(b, crcPerBlock)
	return append(b, ck.Bytes...)
}

var cmdAppendToFile = &command{
	name:  "appendToFile",
	usage: "<localsrc> ... <dst>",
	help: `Appends the contents of all the given local files to the given dst file. The dst
file will be created if it does not exist. If <localSrc> is -, then the input is
read from stdin.`,
	run: func(c *cmdCtx, args []string) error {
		if len(args) < 2 {
			return errors.New("missing destination argument")
		}
		dst, err := c.destination(args[len(args)-1], false)
		if err != nil {
			c.fail(message(err))
			return nil
		}
		stdin := slices.Contains(args[:len(args)-1], "-")
		if stdin && len(args) > 2 {
			return errors.New("stdin (-) must be the sole input argument when present")
		}
		var srcs []*item
		for _, a := range args[:len(args)-1] {
			if a == "-" {
				continue
			}
			it, err := c.literal(a, true)
			if err != nil {
				c.failPath(a, err)
				return nil
			}
			switch {
			case !it.exists():
				c.failPath(it.disp, notFound(it.disp))
				return nil
			case it.isDir():
				c.failPath(it.disp, fs.ErrIsDir)
				return nil
			}
			srcs = append(srcs, it)
		}
		if dst.isDir() {
			c.failPath(dst.disp, fs.ErrIsDir)
			return nil
		}
		if !dst.exists() {
			// Hadoop's create(dst, false): parents are made as needed.
			w, err := dst.fsys.Create(c.ctx, dst.path, fs.CreateOptions{CreateParent: true})
			if err == nil {
				err = w.Close()
			}
			if err != nil {
				c.failPath(dst.disp, err)
				return nil
			}
		}
		w, err := c.appendTo(dst)
		if err != nil {
			c.failPath(dst.disp, err)
			return nil
		}
		if stdin {
			_, err = io.Copy(w, c.sh.Stdin)
		}
		for _, src := range srcs {
			if err != nil {
				break
			}
			var f fs.File
			if f, err = src.fsys.Open(c.ctx, src.path); err != nil {
				w.Close()
				c.failPath(src.disp, err)
				return nil
			}
			_, err = io.Copy(w, f)
			f.Close()
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil && c.ctx.Err() == nil {
			c.failPath(dst.disp, err)
		}
		return nil
	},
}

// appendTo opens the existing file it for appending: fs.Appender, or the
// local file itself.
func (c *cmdCtx) appendTo(it *item) (io.WriteCloser, error) {
	if a, ok := it.fsys.(fs.Appender); ok {
		return a.AppendFile(c.ctx, it.path)
	}
	if isLocal(it.fsys) {
		return os.OpenFile(osPath(it.path), os.O_WRONLY|os.O_APPEND, 0)
	}
	return nil, errNotSupported
}

var cmdTruncate = &command{
	name:  "truncate",
	usage: "[-w] <length> <path> ...",
	help: `Truncate all files that match the specified file pattern to the specified
length.

-w  Requests that the command wait for block recovery to complete, if
    necessary.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 2, unlimited, "w")
		if err != nil {
			return err
		}
		length, err := c.parseCount(args[0], 64, "Illegal length, a non-negative integer expected")
		if err != nil {
			return err
		}
		if length < 0 {
			return usageErrorf("length must be >= 0")
		}
		var wait []*item
		for _, it := range c.expandAll(args[1:], false, false) {
			if c.ctx.Err() != nil {
				return nil
			}
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			if it.isDir() {
				c.failPath(it.disp, fs.ErrIsDir)
				continue
			}
			if length > it.st.Length {
				// Hadoop throws IllegalArgumentException here, which ends
				// the command with its usage.
				return usageErrorf("Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", it.st.Length, length)
			}
			done, err := c.truncate(it, length)
			switch {
			case err != nil:
				if c.ctx.Err() == nil {
					c.failPath(it.disp, err)
				}
			case done:
				fmt.Fprintf(c.out, "Truncated %s to length: %d\n", it.disp, length)
			case o["w"]:
				wait = append(wait, it)
			default:
				fmt.Fprintf(c.out, "Truncating %s to length: %d. Wait for block recovery to complete before further updating this file.\n", it.disp, length)
			}
		}
		for _, it := range wait {
			fmt.Fprintf(c.out, "Waiting for %s ...\n", it.disp)
			c.out.Flush()
			if err := it.fsys.(fs.Truncater).WaitTruncated(c.ctx, it.path); err != nil {
				if c.ctx.Err() == nil {
					c.failPath(it.disp, err)
				}
				continue
			}
			fmt.Fprintf(c.out, "Truncated %s to length: %d\n", it.disp, length)
		}
		return nil
	},
}

// truncate shortens it: fs.Truncater, or the local file itself (always
// done at once).
func (c *cmdCtx) truncate(it *item, length int64) (bool, error) {
	if t, ok := it.fsys.(fs.Truncater); ok {
		return t.Truncate(c.ctx, it.path, length)
	}
	if isLocal(it.fsys) {
		return true, os.Truncate(osPath(it.path), length)
	}
	return false, errNotSupported
}

var cmdText = &command{
	name:  "text",
	usage: "[-ignoreCrc] <src> ...",
	help: `Takes a source file and outputs the file in text format.
The allowed formats are gzip (recognized by its magic number) and, by file
name extension, bzip2 (.bz2) and zlib (.deflate); other files are output as
they are.`,
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 1, unlimited, "ignoreCrc")
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			c.text(it)
		}
		return nil
	},
}

// text writes the file's contents decompressed, as Hadoop's Display.Text:
// gzip by its magic number 1f 8b, other codecs by file name extension.
// (Hadoop also decodes SequenceFiles and Avro files; strata does not.)
func (c *cmdCtx) text(it *item) {
	if !it.exists() {
		c.failPath(it.disp, notFound(it.disp))
		return
	}
	if it.isDir() {
		c.failPath(it.disp, fs.ErrIsDir)
		return
	}
	f, err := it.fsys.Open(c.ctx, it.path)
	if err != nil {
		c.failPath(it.disp, err)
		return
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var r io.Reader = br
	magic, _ := br.Peek(2)
	switch {
	case len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		r, err = gzip.NewReader(br)
	case strings.HasSuffix(it.path, ".bz2"):
		r = bzip2.NewReader(br)
	case strings.HasSuffix(it.path, ".deflate"):
		r, err = zlib.NewReader(br)
	}
	if err == nil {
		_, err = io.Copy(c.out, r)
	}
	if err != nil && c.ctx.Err() == nil {
		c.failPath(it.disp, err)
	}
}
