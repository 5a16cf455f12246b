// Package storage defines HDFS storage types (the tiers a DataNode volume
// can be: DISK, SSD, ARCHIVE, RAM_DISK, ...) and the built-in block storage
// policies (HOT, ONE_SSD, ALL_SSD, ...) with Hadoop's ids, placements and
// fallbacks.
package storage

import (
	"fmt"
	"strings"
)

// Type is a storage type, numbered as Hadoop's StorageTypeProto.
type Type uint8

// Storage types.
const (
	Disk     Type = 1
	SSD      Type = 2
	Archive  Type = 3
	RAMDisk  Type = 4
	Provided Type = 5
	NVDIMM   Type = 6
)

var typeNames = map[Type]string{Disk: "DISK", SSD: "SSD", Archive: "ARCHIVE", RAMDisk: "RAM_DISK", Provided: "PROVIDED", NVDIMM: "NVDIMM"}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("StorageType(%d)", uint8(t))
}

// ParseType parses a storage type name, case-insensitively.
func ParseType(s string) (Type, error) {
	for t, n := range typeNames {
		if strings.EqualFold(n, s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("storage: unknown storage type %q (want DISK, SSD, ARCHIVE, RAM_DISK, PROVIDED or NVDIMM)", s)
}

// Policy is a block storage policy.
type Policy struct {
	ID   uint8
	Name string
	// Types lists the storage type of each replica: replica i takes
	// Types[i], the last one repeating.
	Types []Type
	// CreationFallbacks are tried, in order, when a new block's preferred
	// type has no room; ReplicationFallbacks when re-replicating.
	CreationFallbacks    []Type
	ReplicationFallbacks []Type
	// CopyOnCreateFile is set for policies that copy the policy to a new
	// file at creation (LAZY_PERSIST).
	CopyOnCreateFile bool
}

// Policy ids.
const (
	Unspecified   uint8 = 0
	ColdID        uint8 = 2
	WarmID        uint8 = 5
	HotID         uint8 = 7
	OneSSDID      uint8 = 10
	AllSSDID      uint8 = 12
	AllNVDIMMID   uint8 = 14
	LazyPersistID uint8 = 15
	DefaultID           = HotID
)

// Policies are the built-in policies, in Hadoop's order (highest id first).
var Policies = []Policy{
	{ID: LazyPersistID, Name: "LAZY_PERSIST", Types: []Type{RAMDisk, Disk}, CreationFallbacks: []Type{Disk}, ReplicationFallbacks: []Type{Disk}, CopyOnCreateFile: true},
	{ID: AllNVDIMMID, Name: "ALL_NVDIMM", Types: []Type{NVDIMM}, CreationFallbacks: []Type{Disk}, ReplicationFallbacks: []Type{Disk}},
	{ID: AllSSDID, Name: "ALL_SSD", Types: []Type{SSD}, CreationFallbacks: []Type{Disk}, ReplicationFallbacks: []Type{Disk}},
	{ID: OneSSDID, Name: "ONE_SSD", Types: []Type{SSD, Disk}, CreationFallbacks: []Type{SSD, Disk}, ReplicationFallbacks: []Type{SSD, Disk}},
	{ID: HotID, Name: "HOT", Types: []Type{Disk}, CreationFallbacks: nil, ReplicationFallbacks: []Type{Archive}},
	{ID: WarmID, Name: "WARM", Types: []Type{Disk, Archive}, CreationFallbacks: []Type{Disk, Archive}, ReplicationFallbacks: []Type{Disk, Archive}},
	{ID: ColdID, Name: "COLD", Types: []Type{Archive}},
}

// ByID returns the policy with id, or false.
func ByID(id uint8) (Policy, bool) {
	for _, p := range Policies {
		if p.ID == id {
			return p, true
		}
	}
	return Policy{}, false
}

// ByName returns the policy named name (case-insensitive), or false.
func ByName(name string) (Policy, bool) {
	for _, p := range Policies {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Policy{}, false
}

// ChooseTypes returns the storage type of each of n replicas.
func (p Policy) ChooseTypes(n int) []Type {
	out := make([]Type, n)
	for i := range out {
		out[i] = p.Types[min(i, len(p.Types)-1)]
	}
	return out
}

// String formats the policy as Hadoop's BlockStoragePolicy.toString does,
// which `storagepolicies -listPolicies` prints.
func (p Policy) String() string {
	return fmt.Sprintf("BlockStoragePolicy{%s:%d, storageTypes=%s, creationFallbacks=%s, replicationFallbacks=%s}",
		p.Name, p.ID, typeList(p.Types), typeList(p.CreationFallbacks), typeList(p.ReplicationFallbacks))
}

func typeList(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}
