package examples

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/zones"
)

// The astronomy applications of the Zones algorithm (package zones): a
// sky catalogue generator, neighbour searching and neighbour statistics.
func init() {
	addCommand(Command{Name: "skygen", Usage: zones.SkyGenUsage, Summary: "write a sky catalogue: objects uniform on the sphere or clustered",
		Run: func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
			if len(args) != 2 {
				return usageErr(zones.SkyGenUsage)
			}
			n, err := ParseRows(args[0])
			if err != nil {
				return fmt.Errorf("bad number of objects %q (a number, optionally with k, m, b or t)", args[0])
			}
			return skyErr(zones.RunSkyGen(ctx, env, []string{strconv.FormatUint(n, 10), args[1]}, out))
		}})
	addCommand(Command{Name: "neighbors", Usage: zones.NeighborsUsage, Summary: "find every pair of catalogue objects within zones.theta arcseconds (Zones algorithm)",
		Run: func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
			return skyErr(zones.RunNeighbors(ctx, env, args, out))
		}})
	addCommand(Command{Name: "neighborstats", Usage: zones.NeighborStatsUsage, Summary: "count catalogue pairs per 1-arcsecond distance bin up to zones.maxtheta",
		Run: func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
			return skyErr(zones.RunNeighborStats(ctx, env, args, out))
		}})
}

// skyErr turns the zones package's usage errors into this package's.
func skyErr(err error) error {
	var ue *zones.UsageError
	if errors.As(err, &ue) {
		return usageErr(ue.Usage)
	}
	return err
}
