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
// for map completion events (FetchMapOutputs). With ReuseEnv set the
// child runs attempts in turn (task reuse): it says ReuseReady, then
// answers each TaskSpec line with a TaskResult line carrying the
// attempt's own usage, until its input ends. The byte layouts are in
// docs/format/mapred-protocol.md.
//
// What an attempt does is the job's business: the package mapreduce, which
// imports this one, registers the Runner that rebuilds the job and runs the
// attempt (SetRunner, from its init). So this package never imports
// mapreduce, mapreduce.Main can call Main for `<program> task`, and every
// program that links mapreduce can act as a task child.
//
// Invariants: Main writes exactly one TaskResult per spec it reads, also
// when the spec is malformed or the job's code panics; its exit status is
// 0 only when no result had an error, and a child running attempts in
// turn stops after the first failed one. A child never holds the
// TaskTracker's pipes across an exec (they are close-on-exec), so a
// command it starts (a streaming mapper) cannot keep an attempt alive; a
// child whose TaskTracker died stops its attempt (watchParent).
package taskrun
