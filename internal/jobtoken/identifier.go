package jobtoken

import (
	"errors"
	"unicode/utf8"
)

// Kind is the kind of a job token (Hadoop's JobTokenIdentifier.KIND_NAME):
// a task presents it, with the job's secret as its password, for TOKEN
// authentication to the JobTracker.
const Kind = "mapreduce.job"

// maxJobID bounds a job id read from a peer.
const maxJobID = 127

// Identifier is a JobTokenIdentifier's Writable encoding: the job id as
// Text (a vint length, then UTF-8). Job ids are short, so the length is
// one byte.
func Identifier(jobID string) []byte {
	if len(jobID) > maxJobID {
		jobID = jobID[:maxJobID] // never: job ids are short
	}
	return append([]byte{byte(len(jobID))}, jobID...)
}

// ParseIdentifier returns the job id of an Identifier.
func ParseIdentifier(b []byte) (string, error) {
	// A one-byte vint holds -112..127; longer ids are refused.
	if len(b) < 1 || b[0] > 127 || int(b[0]) != len(b)-1 || len(b)-1 > maxJobID {
		return "", errors.New("malformed job token identifier")
	}
	id := string(b[1:])
	if !utf8.ValidString(id) {
		return "", errors.New("malformed job token identifier")
	}
	return id, nil
}
