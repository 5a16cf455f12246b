package taskrun

import (
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/spill"
)

// MapLocation is where a map completion event says the map's output is.
func MapLocation(e *mrpb.MapCompletionEvent) shuffle.MapLocation {
	return shuffle.MapLocation{MapIndex: int(e.GetMapIndex()), AttemptID: e.GetAttemptId(), URL: e.GetUrl()}
}

// MapLocations converts events with MapLocation.
func MapLocations(events []*mrpb.MapCompletionEvent) []shuffle.MapLocation {
	var locs []shuffle.MapLocation
	for _, e := range events {
		locs = append(locs, MapLocation(e))
	}
	return locs
}

// MapOutputProto is out as a TaskResult carries it.
func MapOutputProto(out spill.Output) *mrpb.MapOutput {
	m := &mrpb.MapOutput{Path: proto.String(out.Path), IndexPath: proto.String(out.IndexPath)}
	for _, e := range out.Index {
		m.Index = append(m.Index, &mrpb.MapOutputIndexEntry{Offset: proto.Int64(e.Offset),
			RawLength: proto.Int64(e.RawLength), PartLength: proto.Int64(e.PartLength)})
	}
	return m
}

// MapOutput is the spill.Output m describes.
func MapOutput(m *mrpb.MapOutput) spill.Output {
	out := spill.Output{Path: m.GetPath(), IndexPath: m.GetIndexPath()}
	for _, e := range m.GetIndex() {
		out.Index = append(out.Index, spill.IndexEntry{Offset: e.GetOffset(), RawLength: e.GetRawLength(), PartLength: e.GetPartLength()})
	}
	return out
}

// TypeLetter is Hadoop's letter for a task type in attempt ids: m, r or
// c (job cleanup).
func TypeLetter(t mrpb.TaskType) byte {
	switch t {
	case mrpb.TaskType_MAP:
		return 'm'
	case mrpb.TaskType_JOB_CLEANUP:
		return 'c'
	}
	return 'r'
}
