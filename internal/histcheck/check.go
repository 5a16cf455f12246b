package histcheck

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is what Check found.
type Report struct {
	// Result is porcupine's verdict over all keys: Illegal if any key's
	// history is not linearizable, else Unknown if any key's check ran out
	// of time, else Ok.
	Result porcupine.CheckResult
	// Keys is the number of keys (partitions) checked; Ops the number of
	// operations in them.
	Keys, Ops int
	// Illegal lists the keys whose histories are not linearizable, in key
	// order; TimedOut those whose check ran out of time.
	Illegal, TimedOut []string
	// Visualization is the HTML file written for the illegal keys, or "".
	Visualization string
	// VisualizationErr is why writing it failed, if it did.
	VisualizationErr error
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d ops on %d keys", r.Result, r.Ops, r.Keys)
	if len(r.Illegal) > 0 {
		fmt.Fprintf(&b, "; not linearizable: %s", strings.Join(r.Illegal, ", "))
	}
	if len(r.TimedOut) > 0 {
		fmt.Fprintf(&b, "; check timed out: %s", strings.Join(r.TimedOut, ", "))
	}
	if r.Visualization != "" {
		fmt.Fprintf(&b, "; visualization: %s", r.Visualization)
	}
	if r.VisualizationErr != nil {
		fmt.Fprintf(&b, "; writing visualization: %v", r.VisualizationErr)
	}
	return b.String()
}

// Check reports whether history is linearizable under model (RegisterModel
// or NamespaceModel), checking each key on its own within an overall
// timeout (0: none). ok is true only for porcupine.Ok; a check that ran
// out of time is not ok, and Report says which keys it could not decide.
// On a violation, if vizPath is not empty, porcupine's HTML visualisation
// of the illegal keys' histories is written there. An empty history is
// ok: callers should also look at Report.Ops.
func Check(model porcupine.Model, history []porcupine.Operation, timeout time.Duration, vizPath string) (ok bool, rep Report) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	single := model
	single.Partition, single.PartitionEvent = nil, nil
	parts := [][]porcupine.Operation{history}
	if model.Partition != nil {
		parts = model.Partition(history)
	}
	var bad []porcupine.Operation
	for _, part := range parts {
		if len(part) == 0 {
			continue
		}
		key := part[0].Input.(Input).Key
		rep.Keys++
		rep.Ops += len(part)
		var left time.Duration
		if !deadline.IsZero() {
			if left = time.Until(deadline); left <= 0 {
				rep.TimedOut = append(rep.TimedOut, key)
				continue
			}
		}
		switch porcupine.CheckOperationsTimeout(single, part, left) {
		case porcupine.Illegal:
			rep.Illegal = append(rep.Illegal, key)
			bad = append(bad, part...)
		case porcupine.Unknown:
			rep.TimedOut = append(rep.TimedOut, key)
		}
	}
	switch {
	case len(rep.Illegal) > 0:
		rep.Result = porcupine.Illegal
	case len(rep.TimedOut) > 0:
		rep.Result = porcupine.Unknown
	default:
		rep.Result = porcupine.Ok
	}
	if len(bad) > 0 && vizPath != "" {
		// Verbose again, on the bad keys only, for the longest partial
		// linearizations the visualisation draws. Its own result is not
		// needed: these keys were already found illegal. If it runs out of
		// time the drawing has shorter linearizations, which still shows
		// the history.
		_, info := porcupine.CheckOperationsVerbose(model, bad, timeout)
		if err := porcupine.VisualizePath(model, info, vizPath); err != nil {
			rep.VisualizationErr = err
		} else {
			rep.Visualization = vizPath
		}
	}
	return rep.Result == porcupine.Ok, rep
}
