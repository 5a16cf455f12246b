// Package taskrun is the plumbing between a TaskTracker and the child
// process that runs one task attempt (`strata task`, or `<program> task` for
// a user's program that calls mapreduce.Main): Hadoop's child JVM and its
// umbilical.
//
// The TaskTracker writes the attempt's TaskSpec on the child's standard
// input and reads its TaskResult from the child's standard output, both in
// protobuf's JSON mapping of the messages in proto/mapred (WriteSpec,
// ReadSpec, WriteResult, ReadResult). Two inherited pipes, named by
// ProgressFDEnv and CommitFDEnv, carry progress beats and commit
// arbitration (Link); JobTrackerEnv names the JobTracker that a reduce asks
// for map completion events (FetchMapOutputs). The byte layouts are in
// docs/format/mapred-protocol.md.
//
// What an attempt does is the job's business: the package mapreduce, which
// imports this one, registers the Runner that rebuilds the job and runs the
// attempt (SetRunner, from its init). So this package never imports
// mapreduce, mapreduce.Main can call Main for `<program> task`, and every
// program that links mapreduce can act as a task child.
//
// Invariants: Main always writes exactly one TaskResult, also when the
// spec is malformed or the job's code panics, and its exit status is 0
// only when that result has no error. A child never holds the
// TaskTracker's pipes across an exec (they are close-on-exec), so a
// command it starts (a streaming mapper) cannot keep an attempt alive.
package taskrun
