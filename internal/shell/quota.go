package shell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stratafs/strata/fs"
)

// -count, as Hadoop's Count with ContentSummary's and QuotaUsage's
// column formats.

const (
	countQuotaFormat   = "%12s %15s %15s %15s " // QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA
	countSummaryFormat = "%12s %12s %18s "      // DIR_COUNT FILE_COUNT CONTENT_SIZE
	countTypeFormat    = "%13s %17s "           // <T>_QUOTA REM_<T>_QUOTA
)

// quotaTypeNames are the storage types supporting quota, in Hadoop's
// StorageType order: what -t without a list shows.
var quotaTypeNames = []string{"RAM_DISK", "NVDIMM", "SSD", "DISK", "ARCHIVE"}

var cmdCount = &command{
	name:  "count",
	usage: "[-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] <path> ...",
	help: `Count the number of directories, files and bytes under the paths
that match the specified file pattern.  The output columns are:
DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
or, with the -q option:
QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA
      DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
The -h option shows file sizes in human readable format.
The -v option displays a header line.
The -x option excludes snapshots from being calculated.
The -t option displays quota by storage types.
It should be used with -q or -u option, otherwise it will be ignored.
If a comma-separated list of storage types is given after the -t option,
it displays the quota and usage for the specified types.
Otherwise, it displays the quota and usage for all the storage
types that support quota. The list of possible storage types(case insensitive):
ram_disk, ssd, disk, archive and nvdimm.
It can also pass the value '', 'all' or 'ALL' to specify all the storage types.
The -u option shows the quota and
the usage against the quota without the detailed content summary.`,
	run: func(c *cmdCtx, args []string) error {
		args, types, typed, err := popTypesOption(args)
		if err != nil {
			return err
		}
		o, args, err := parseOpts(args, 0, unlimited, "q", "h", "v", "u", "x")
		if err != nil {
			return err
		}
		if len(args) == 0 {
			args = []string{"."}
		}
		quotas := o["q"] || o["u"]
		byType := typed && quotas
		format := func(n int64) string {
			if o["h"] {
				return humanSize(n)
			}
			return strconv.FormatInt(n, 10)
		}
		if o["v"] {
			var h strings.Builder
			switch {
			case byType:
				for _, t := range types {
					fmt.Fprintf(&h, countTypeFormat, t+"_QUOTA", "REM_"+t+"_QUOTA")
				}
			case o["u"]:
				fmt.Fprintf(&h, countQuotaFormat, "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
			default:
				if o["q"] {
					fmt.Fprintf(&h, countQuotaFormat, "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
				}
				fmt.Fprintf(&h, countSummaryFormat, "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE")
			}
			fmt.Fprintln(c.out, h.String()+"PATHNAME")
		}
		for _, it := range c.expandAll(args, false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			line, err := countLine(c, it, o["q"], o["u"], byType, types, format)
			if err != nil {
				c.failPath(it.disp, err)
				continue
			}
			fmt.Fprintln(c.out, line+it.disp)
		}
		return nil
	},
}

// popTypesOption takes "-t [types]" out of args as Hadoop's CommandFormat
// does for an option with a value: the next argument is the value unless
// it is an option or the last argument.
func popTypesOption(args []string) (rest, types []string, typed bool, err error) {
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		if a != "-t" {
			continue
		}
		rest = append(rest, args[:i]...)
		val := ""
		after := args[i+1:]
		if len(after) > 1 && !strings.HasPrefix(after[0], "-") {
			val, after = after[0], after[1:]
		}
		rest = append(rest, after...)
		if val == "" || strings.EqualFold(val, "all") {
			return rest, quotaTypeNames, true, nil
		}
		for _, t := range strings.Split(val, ",") {
			t = strings.ToUpper(strings.TrimSpace(t))
			known := false
			for _, k := range append(quotaTypeNames, "PROVIDED") {
				known = known || k == t
			}
			if !known {
				return nil, nil, false, usageErrorf("No enum constant org.apache.hadoop.fs.StorageType.%s", t)
			}
			types = append(types, t)
		}
		return rest, types, true, nil
	}
	return args, nil, false, nil
}

func countLine(c *cmdCtx, it *item, q, u, byType bool, types []string, format func(int64) string) (string, error) {
	quotaCols := func(quota, used, spaceQuota, spaceUsed int64) string {
		qs, qrem, sq, sqrem := "none", "inf", "none", "inf"
		if quota > 0 {
			qs, qrem = format(quota), format(quota-used)
		}
		if spaceQuota >= 0 {
			sq, sqrem = format(spaceQuota), format(spaceQuota-spaceUsed)
		}
		return fmt.Sprintf(countQuotaFormat, qs, qrem, sq, sqrem)
	}
	if byType || u {
		qu, err := quotaUsage(c, it)
		if err != nil {
			return "", err
		}
		if !byType {
			return quotaCols(qu.Quota, qu.FileAndDirectoryCount, qu.SpaceQuota, qu.SpaceConsumed), nil
		}
		var b strings.Builder
		for _, t := range types {
			qs, rem := "none", "inf"
			if tq, ok := qu.TypeQuota[t]; ok && tq >= 0 {
				qs, rem = format(tq), format(tq-qu.TypeConsumed[t])
			}
			fmt.Fprintf(&b, countTypeFormat, qs, rem)
		}
		return b.String(), nil
	}
	cs, err := it.fsys.ContentSummary(c.ctx, it.path)
	if err != nil {
		return "", err
	}
	line := ""
	if q {
		line = quotaCols(cs.Quota, cs.DirectoryCount+cs.FileCount, cs.SpaceQuota, cs.SpaceConsumed)
	}
	return line + fmt.Sprintf(countSummaryFormat, format(cs.DirectoryCount), format(cs.FileCount), format(cs.Length)), nil
}

// quotaUsage is getQuotaUsage where the file system has it, else what a
// content summary says (Hadoop's FileSystem.getQuotaUsage default).
func quotaUsage(c *cmdCtx, it *item) (fs.QuotaUsage, error) {
	if qf, ok := it.fsys.(fs.QuotaUsager); ok {
		return qf.QuotaUsage(c.ctx, it.path)
	}
	cs, err := it.fsys.ContentSummary(c.ctx, it.path)
	if err != nil {
		return fs.QuotaUsage{}, err
	}
	return fs.QuotaUsage{
		FileAndDirectoryCount: cs.DirectoryCount + cs.FileCount, Quota: cs.Quota,
		SpaceConsumed: cs.SpaceConsumed, SpaceQuota: cs.SpaceQuota,
	}, nil
}
