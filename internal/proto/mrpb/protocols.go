package mrpb

// The Hadoop IPC protocol names that carry these messages
// (docs/format/mapred-protocol.md). Hand-written: protoc leaves this file
// alone.
const (
	// SubmissionProtocol: job clients → JobTracker (submitJob,
	// getJobStatus, listJobs, killJob).
	SubmissionProtocol = "strata.JobSubmissionProtocol"
	// InterTrackerProtocol: TaskTrackers → JobTracker (heartbeat).
	InterTrackerProtocol = "strata.InterTrackerProtocol"
	// UmbilicalProtocol: task children → JobTracker
	// (getMapCompletionEvents).
	UmbilicalProtocol = "strata.TaskUmbilicalProtocol"
)
