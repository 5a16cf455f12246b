package histcheck

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/anishathalye/porcupine"
)

// regState is RegisterModel's per-key state.
type regState struct {
	present bool
	value   string
}

// RegisterModel checks each key as a register holding a file's content;
// see the package doc for its operations. Operations of other kinds are
// left out of its partitions.
var RegisterModel = porcupine.Model{
	Partition: partitionBy(Op.register),
	Init:      func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(regState), input.(Input), output.(Output)
		switch in.Op {
		case OpWrite:
			switch out.Result {
			case OK, Unknown:
				return true, regState{present: true, value: in.Value}
			case Failed:
				return true, s
			}
		case OpRead:
			switch out.Result {
			case OK:
				return s.present && s.value == out.Value, s
			case Absent:
				return !s.present, s
			case Torn, Failed, Unknown:
				return true, s
			}
		case OpDelete:
			return stepRemove(s.present, out.Result, s, regState{})
		}
		return false, s
	},
	Hash: func(state any) uint64 {
		s := state.(regState)
		if !s.present {
			return 0
		}
		h := fnv.New64a()
		h.Write([]byte(s.value))
		return h.Sum64() | 1
	},
	DescribeOperation: describeOp,
	DescribeState: func(state any) string {
		s := state.(regState)
		if !s.present {
			return "absent"
		}
		return fmt.Sprintf("%q", s.value)
	},
}

// NamespaceModel checks each key as a name that exists or not, created
// without overwrite; see the package doc. Operations of other kinds are
// left out of its partitions.
var NamespaceModel = porcupine.Model{
	Partition: partitionBy(Op.namespace),
	Init:      func() any { return false },
	Step: func(state, input, output any) (bool, any) {
		exists, in, out := state.(bool), input.(Input), output.(Output)
		switch in.Op {
		case OpCreate:
			switch out.Result {
			case OK:
				return !exists, true
			case Exists:
				return exists, exists
			case Unknown:
				return true, true
			case Failed:
				return true, exists
			}
		case OpExists:
			switch out.Result {
			case OK:
				return exists, exists
			case Absent:
				return !exists, exists
			case Failed, Unknown:
				return true, exists
			}
		case OpRemove:
			return stepRemove(exists, out.Result, exists, false)
		}
		return false, exists
	},
	Hash: func(state any) uint64 {
		if state.(bool) {
			return 1
		}
		return 0
	},
	DescribeOperation: describeOp,
	DescribeState: func(state any) string {
		if state.(bool) {
			return "exists"
		}
		return "absent"
	},
}

// stepRemove is delete's step in either model: cur is the state, gone the
// state after a delete.
func stepRemove[S any](present bool, r Result, cur, gone S) (bool, any) {
	switch r {
	case OK:
		return present, gone
	case Absent:
		return !present, cur
	case Unknown:
		return true, gone
	case Failed:
		return true, cur
	}
	return false, cur
}

// partitionBy splits a history into one partition per key, keeping only
// operations for which keep is true, in key order so results repeat.
func partitionBy(keep func(Op) bool) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range h {
			in := op.Input.(Input)
			if keep(in.Op) {
				byKey[in.Key] = append(byKey[in.Key], op)
			}
		}
		keys := make([]string, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			parts[i] = byKey[k]
		}
		return parts
	}
}

func describeOp(input, output any) string {
	in, out := input.(Input), output.(Output)
	arg := ""
	if in.Op == OpWrite {
		arg = fmt.Sprintf("%q", in.Value)
	}
	res := out.Result.String()
	if out.Result == OK && in.Op == OpRead {
		res = fmt.Sprintf("%q", out.Value)
	}
	return fmt.Sprintf("%s %s(%s) → %s", in.Key, in.Op, arg, res)
}
