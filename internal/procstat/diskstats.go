package procstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// DiskStat is one block device's line of /proc/diskstats
// (Documentation/admin-guide/iostats.rst): counts since boot.
type DiskStat struct {
	Name                  string
	Reads, Writes         uint64 // requests completed
	ReadBytes, WriteBytes uint64 // sectors × 512
	ReadTime, WriteTime   time.Duration
	Busy                  time.Duration // time with I/O in flight (io_ticks)
}

// Sub is d minus o, what the device did between two readings.
func (d DiskStat) Sub(o DiskStat) DiskStat {
	return DiskStat{Name: d.Name, Reads: d.Reads - o.Reads, Writes: d.Writes - o.Writes,
		ReadBytes: d.ReadBytes - o.ReadBytes, WriteBytes: d.WriteBytes - o.WriteBytes,
		ReadTime: d.ReadTime - o.ReadTime, WriteTime: d.WriteTime - o.WriteTime, Busy: d.Busy - o.Busy}
}

// DiskStats reads /proc/diskstats.
func DiskStats() (map[string]DiskStat, error) {
	f, err := os.Open("/proc/diskstats")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("procstat: no /proc/diskstats: %w", errors.ErrUnsupported)
		}
		return nil, err
	}
	defer f.Close()
	return parseDiskStats(f)
}

func parseDiskStats(r io.Reader) (map[string]DiskStat, error) {
	out := map[string]DiskStat{}
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// major minor name, then at least 11 counters.
		if len(f) < 14 {
			continue
		}
		var n [11]uint64
		ok := true
		for i := range n {
			v, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				ok = false
				break
			}
			n[i] = v
		}
		if !ok {
			continue
		}
		ms := time.Millisecond
		out[f[2]] = DiskStat{Name: f[2], Reads: n[0], ReadBytes: n[2] * 512, ReadTime: time.Duration(n[3]) * ms,
			Writes: n[4], WriteBytes: n[6] * 512, WriteTime: time.Duration(n[7]) * ms, Busy: time.Duration(n[9]) * ms}
	}
	return out, sc.Err()
}
