// Package jobtracker is the JobTracker daemon of strata's MapReduce
// (Hadoop MRv1's architecture): it accepts jobs from clients, divides them
// into map and reduce tasks, hands task attempts to TaskTrackers in their
// heartbeats — data-local maps first, into the trackers' free slots —,
// retries failed attempts up to mapreduce.map/reduce.maxattempts, re-runs
// the maps whose output was lost with a TaskTracker, speculates on
// stragglers, arbitrates commits and has the job's output committed or
// aborted by a job cleanup task on a TaskTracker. Clients, TaskTrackers
// and task children speak to it over Hadoop IPC
// (strata.JobSubmissionProtocol, strata.InterTrackerProtocol,
// strata.TaskUmbilicalProtocol; docs/format/mapred-protocol.md), and it
// writes each finished job's history (History) under its own history dir.
//
// Trust: a job is its submitter's (the IPC caller), whatever its spec
// says; it is killed only by its owner, an administrator or a user of its
// modify ACL (checkAccess); each job has a shuffle secret (jobtoken) that
// only its attempts' TaskTrackers get; and the JobTracker never opens a
// path a job names (no output setup or commit, no history from the job's
// settings).
//
// The state machine is driven only by its inputs — heartbeat requests,
// submit and kill calls, and the time Config.Clock tells (tracker expiry
// is expireTrackers, run by the monitor) — so it is tested by calling the
// handlers directly with a fake clock, without a socket.
//
// Invariants, under JobTracker.mu:
//   - a task is pending, running (with at least one attempt in
//     task.running) or done; a done map names the tracker and attempt
//     whose output reduces fetch, and a job's map completion events only
//     grow;
//   - at most one attempt of a task is allowed to commit while it runs
//     (task.committer), and none once the task is done;
//   - a task gets at most one speculative attempt; when one attempt
//     succeeds the others become losers, and the job commits only once no
//     task has a loser left (reported ended or lost with its tracker);
//   - only RUNNING jobs change; a job that is committing cannot be killed;
//   - a job leaves RUNNING for SUCCEEDED only when its commit cleanup
//     attempt reports success; a failed or killed job gets an abort
//     cleanup; a finished job is retired only once its cleanup is done;
//   - history writes run off the lock, and Close waits for them.
package jobtracker
