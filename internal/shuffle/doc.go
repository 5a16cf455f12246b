// Package shuffle is MapReduce's shuffle: TaskTrackers serve the finished
// map outputs of their map attempts over HTTP, and each reduce attempt
// fetches its partition of every map output, merging as it goes. The
// HTTP protocol and the policies are in docs/format/shuffle.md; the bytes
// moved are map-output segments (docs/format/map-output.md, package
// spill).
//
// # TaskTracker side
//
// A TaskTracker makes one Server (Hadoop's ShuffleHandler), mounts it at
// Path on its HTTP server (mapreduce.shuffle.port), calls Server.Add with
// a map attempt's spill.Output when the attempt succeeds, and
// Server.RemoveJob when the job is over (then it removes the files with
// spill.RemoveOutput). A request names a job, a map attempt and a reduce
// partition; the answer is that partition's segment as stored, with its
// lengths in headers. At most ServerConfig.MaxConcurrent requests are
// served at once; others get 503 with Retry-After.
//
// # Reduce side
//
// A reduce attempt makes one Shuffle (Hadoop's Shuffle, Fetcher,
// ShuffleScheduler and MergeManager in one) with New, gives it map
// locations with Add as the JobTracker reports finished maps, and calls
// Wait for the merged records; Fetch does all three when every location
// is known. ParallelCopies fetchers take queued maps, preferring servers
// with the fewest fetches running. A segment up to MemoryLimitPercent of
// MemoryBudget is read into memory (the budget is reserved first, and a
// fetch waits for room; the segment is verified by
// spill.NewMemorySegment); a larger one is copied to a file in the
// attempt's local dirs (spill.CopySegment verifies it on the way). When
// the memory segments reach MergePercent of the budget, the oldest of
// them are merged into one disk segment in the background (the in-memory
// merge): as many as will not fit in the budget once the maps not fetched
// yet, at the mean size so far, have come (none when they fit; then the
// final merge reads everything from memory; a fetch that does not fit
// after all starts a merge of what it needs); when
// there are 2×SortFactor−1 disk segments, the SortFactor smallest are
// merged in the background (the on-disk merge). Wait's final merge is
// spill.Merge of everything, smallest first, streaming; the memory
// segments enter it as one merge of them all, which the merge factor does
// not split (it bounds open files, and splitting would write the memory
// segments to disk to read them back).
//
// A failed fetch — no connection, an HTTP error, a timeout, a short or
// corrupt segment — is retried against the same server after a growing
// backoff, Config.Retries times (a request that got no response at all
// charges every map queued for that server, so a dead TaskTracker's maps
// are all given up together); then the map attempt is given up:
// Config.OnFailure is called (report the fetch failure to the JobTracker,
// which re-runs the map) and Wait returns a *FetchError naming the
// failed attempts once nothing else is in progress. Add the re-run
// attempt's location and Wait again: what was fetched is kept. A 503 is
// not a failure; the map is retried after the server's Retry-After.
//
// # Invariants
//
//   - Memory held by fetched segments, in flight or fetched, never
//     exceeds MemoryBudget.
//   - No record of a corrupt segment is merged: memory segments are
//     verified before use, disk segments while they are copied.
//   - A fetch never waits for ever: ConnectTimeout+ReadTimeout for the
//     response headers, ReadTimeout between body reads.
//   - Every local file is in <local dir>/<Config.Name>/; Close removes
//     those directories, or, once Wait has returned the merged Iterator,
//     closing that Iterator does.
package shuffle
