package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/storage"
)

// dfsadmin's quota commands, as Hadoop's DFSAdmin: -setQuota, -clrQuota,
// -setSpaceQuota and -clrSpaceQuota, each over a list of directories;
// a failure on one is reported ("setQuota: <message>") and the others
// are still done; the exit code is 255 when any failed, as Hadoop's -1.

var quotaUsages = map[string]string{
	"-setQuota":      "-setQuota <quota> <dirname>...<dirname>",
	"-clrQuota":      "-clrQuota <dirname>...<dirname>",
	"-setSpaceQuota": "-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>",
	"-clrSpaceQuota": "-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>",
}

// dfsadminQuota runs a quota command; ok is false when args[0] is not one.
func dfsadminQuota(ctx context.Context, env *Env, args []string) (code int, ok bool) {
	if len(args) == 0 || quotaUsages[args[0]] == "" {
		return 0, false
	}
	cmd, rest := args[0], args[1:]
	usage := func(msg string) (int, bool) {
		if msg != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", cmd[1:], msg)
		}
		fmt.Fprintf(env.Stderr, "Usage: strata dfsadmin [%s]\n", quotaUsages[cmd])
		return 255, true
	}
	var typ string
	if cmd == "-setSpaceQuota" || cmd == "-clrSpaceQuota" {
		for i := 0; i < len(rest); i++ {
			if rest[i] == "-storageType" {
				if i+1 >= len(rest) {
					return usage("option -storageType requires 1 argument.")
				}
				typ = rest[i+1]
				rest = append(append([]string(nil), rest[:i]...), rest[i+2:]...)
				break
			}
		}
		if typ != "" {
			st, err := storage.ParseType(typ)
			if err != nil || !strings.EqualFold(st.String(), typ) {
				return usage(fmt.Sprintf("No enum constant org.apache.hadoop.fs.StorageType.%s", strings.ToUpper(typ)))
			}
			typ = st.String()
		}
	}
	var quota int64
	if cmd == "-setQuota" || cmd == "-setSpaceQuota" {
		if len(rest) < 2 {
			return usage("Not enough arguments: expected 2 but got " + strconv.Itoa(len(rest)))
		}
		q, err := string2long(rest[0])
		if err != nil || q <= 0 {
			return usage(fmt.Sprintf("Invalid values for quota : %s", rest[0]))
		}
		quota, rest = q, rest[1:]
	} else if len(rest) < 1 {
		return usage("Not enough arguments: expected 1 but got 0")
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "dfsadmin: %v\n", err)
		return 255, true
	}
	defer c.Close()
	code = 0
	for _, dir := range rest {
		p := fs.Abs(c, dir, false)
		var err error
		switch {
		case cmd == "-setQuota":
			err = c.SetQuota(ctx, p, quota, hdfs.QuotaDontSet)
		case cmd == "-clrQuota":
			err = c.SetQuota(ctx, p, hdfs.QuotaReset, hdfs.QuotaDontSet)
		case cmd == "-setSpaceQuota" && typ != "":
			err = c.SetQuotaByStorageType(ctx, p, typ, quota)
		case cmd == "-setSpaceQuota":
			err = c.SetQuota(ctx, p, hdfs.QuotaDontSet, quota)
		case typ != "":
			err = c.SetQuotaByStorageType(ctx, p, typ, hdfs.QuotaReset)
		default:
			err = c.SetQuota(ctx, p, hdfs.QuotaDontSet, hdfs.QuotaReset)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %s\n", cmd[1:], errText(err))
			code = 255
		}
	}
	return code, true
}

// string2long parses a number with an optional binary prefix (k, m, g, t,
// p, e; any case), as Hadoop's TraditionalBinaryPrefix.string2long.
func string2long(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	shift := uint(0)
	if i := strings.IndexByte("kmgtpe", byte(strings.ToLower(s[len(s)-1:])[0])); i >= 0 {
		shift = uint(10 * (i + 1))
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if shift > 0 && (n > (1<<63-1)>>shift || n < -(1<<63)>>shift) {
		return 0, fmt.Errorf("%s overflows", s)
	}
	return n << shift, nil
}
