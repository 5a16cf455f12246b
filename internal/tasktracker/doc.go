// Package tasktracker is the TaskTracker daemon of strata's MapReduce
// (Hadoop MRv1's architecture). It heartbeats to the JobTracker with its
// free map and reduce slots and the attempts that ended, runs each attempt
// it is given as a child process (`strata task`: the attempt's TaskSpec on
// stdin, its TaskResult on stdout, the pipes of internal/taskrun), so a crashing or
// runaway job cannot take the daemon down, and serves finished maps'
// outputs to reducers over HTTP at shuffle.Path — only to requests signed
// with the job's shuffle secret, which arrives with each launch (TaskSpec
// job_token) and is forgotten when the job is done. It also runs jobs'
// cleanup attempts, which commit or abort their output. With the Linux
// task controller (mapreduce.tasktracker.taskcontroller) and root, each
// child runs as its job's user (controller.go). A job with
// mapreduce.job.jvm.numtasks other than 1 has its attempts of a kind run
// in turn in one child (child.go: Hadoop's JVM reuse), which waits idle
// between them.
//
// Local layout, under each directory of mapreduce.cluster.local.dir:
//
//	taskTracker/<job id>/<attempt id>/   the attempt's spills and output
//	taskTracker/<job id>/child_<attempt id>/ a reused child's token file
//	userlogs/<job id>/<attempt id>.stderr the child's standard error
//
// A job's directories are removed when the JobTracker says it is done.
//
// The daemon's logic is in a few steps the tests call directly, without a
// socket or a child process: heartbeatRequest (what the next heartbeat
// says), acknowledge (which reports got through), apply (what the answer
// asks: launches, kills, commit leave, finished jobs) and finish (how a
// child's end becomes a report, and a map's output a served one).
//
// Invariants, under TaskTracker.mu: free slots of a kind plus the running
// attempts of that kind equal the configured slots (a job cleanup counts
// as a map when it was launched with a map slot free, else as a reduce); a report stays in
// every heartbeat until one carrying it is answered, so none is lost to a
// failed heartbeat (the JobTracker ignores repeats); an attempt is told at
// most once that it may commit; a map's output is served only after its
// child succeeded, until its job is done; idle children of a kind never
// outnumber its free slots, and only a child whose last attempt
// succeeded is idle.
package tasktracker
