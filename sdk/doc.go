// Package sdk is the Go SDK for Home-Index modules: processes that enrich files (OCR,
// captions, transcripts, thumbnails, ...) and talk to homeindexd only through Redis. A module
// implements Handler (Check and Run, optionally Loader and Unloader) and calls Main; the SDK
// does the rest, speaking the same Redis protocol as the upstream Python runtime
// (run_server.py) without its races.
//
//	type captioner struct{}
//
//	func (captioner) Check(ctx context.Context, job *sdk.Job) (bool, error) { ... }
//	func (captioner) Run(ctx context.Context, job *sdk.Job) (sdk.Result, error) { ... }
//
//	func main() { sdk.Main(captioner{}) }
//
// Package sdk/moduletest runs a Handler against a real redis-server in a few lines.
//
// # Environment
//
// Environment lists the variables LoadConfig reads (MODULE_NAME, MODULE_UID, MODULES,
// REDIS_HOST, TIMEOUT, WORKER_ID, RESOURCE_SHARES, METADATA_DIRECTORY, FILES_DIRECTORY,
// UID_RETRY_SECONDS, LOGGING_LEVEL, LOG_FORMAT...) with their defaults; a module built on Main
// prints that list for --help, and PrintHelp adds a module's own variables to it.
//
// # Protocol
//
// Keys are those of package protocol. A worker handles one item at a time:
//
//  1. Claim (one Lua script, Redis clock): the head of <m>:check, else, during a run phase,
//     the head of <m>:run, moves to the tail of <m>:<phase>:processing and its timeouts member
//     protocol.TimeoutMember("<m>:<phase>", item) gets the score TIME + TIMEOUT, in the same
//     step: the item is in a list at every instant. A run is claimed only if the worker heads
//     every <g>:share list of its groups (checked in the same script). An idle worker waits in
//     BLMOVE <list> <list> LEFT LEFT (on its own connection per list), which returns when the
//     list has an item without moving it, then claims it as above.
//  2. Items whose uid (if any) differs from MODULE_UID are logged ("uid mismatch") and set
//     aside: they stay in the processing list and their deadline moves to TIME +
//     UID_RETRY_SECONDS, so the items behind them go on (no head-of-line blocking) and the
//     reaper offers them again later. Unreadable items are set aside the same way.
//  3. Check or Run runs with a context that ends at the local deadline (taken before the claim,
//     so never after Redis's). A handler that returns after it, or a result that arrives after
//     Redis's deadline, is discarded: the item stays for the reaper, which retries it.
//  4. The outcome is pushed by one script that first checks that the timeouts member still
//     exists and has not expired by the Redis clock, then ZREMs it, LREMs (count 1) the item
//     from the processing list and RPUSHes: the item to <m>:run (check true), or a done
//     message to modules:done. If the member is gone the outcome is dropped; if it expired,
//     nothing changes. During a run phase a check that says yes is pushed by a script that
//     also claims the head of <m>:run in the same step (the run's deadline and timeouts member
//     as in 1): when nothing waited there, that is the item itself, run at once with the Job
//     Check saw.
//  5. A handler whose Check cannot say no (HandlerFuncs with no CheckFunc) is checked only
//     for the item that starts its run phase. During the phase each claim takes the head of
//     <m>:run, else the head of <m>:check, when it was built for the worker's uid (it holds
//     protocol.ItemUIDMarker), straight to <m>:run:processing with the run's deadline and
//     timeouts member (protocol.TimeoutMember("<m>:run", item)): the state a check that said
//     yes and a claimed run would leave, in one script instead of two. Other items (another
//     uid's, the upstream core's) are claimed as checks, as in 1.
//
// Done messages are compact JSON. Their document is the item's echo: for an item from
// homeindexd (it has job fields) its identity only, {"id", "uid" (if any), "_hi_job",
// "_hi_attempt", "_hi_since"}, so a result never carries other modules' fields as they were
// at dispatch; for an item from the upstream Python core the whole item, verbatim (that core
// replaces document.json with the returned document).
//
//	check false   {"module":"<m>","document":<echo>}
//	run result    {"module":"<m>","document":<echo with Result.Document's fields>,"content":<content>}
//	failure       {"module":"<m>","document":<echo>,"_hi_error":"<text>"}
//	permanent     {"module":"<m>","document":<echo>,"_hi_error":"<text>","_hi_permanent":true}
//
// Result fields replace same-named fields of the echo in place; new ones follow, sorted. A
// result with no fields and no content sends the check-false form. "content" is a string
// (Text), a list of strings (Texts), or a list of objects {"text": ..., <extra fields,
// sorted>} (Segments). Failures are errors and panics from Check or Run, results the daemon
// would refuse (core or _hi_ fields, values JSON cannot hold: permanent), and items that can
// never be processed (no paths, a path leaving FILES_DIRECTORY, an id that cannot name a
// directory, a document that does not parse: permanent). The text is cut at 2000 bytes.
// protocol.DonePermanentField ("_hi_permanent": true, only beside "_hi_error") asks the daemon
// to park the job at once instead of retrying it.
//
// Items from the upstream Python core (a bare document with "uid", Python spacing, no job
// fields) are accepted as they are: Job.Attempt is then 0, the timeouts member is built from
// the exact item string, and the answer echoes it whole.
//
// # Files
//
// Job.Path is FILES_DIRECTORY joined with the document's first paths key. Job.MetadataDir is
// METADATA_DIRECTORY/by-id/<id>/<module>, created before Run (a check does not create it).
// Every run appends its log lines to log.txt there (plain text, UTC times), starting with
// "run started" and ending with "run done", "run failed", "run timed out" or a shutdown line,
// with the handler's own lines (Job.Log) between; they also go to the worker's log. Only lines
// at LOGGING_LEVEL or above are written, and log.txt is opened at a run's first one: at
// LOGGING_LEVEL=error a run that goes well leaves no log.txt.
//
// # Run phases
//
// The worker drains <m>:check first (checks are cheap and need no share tokens). When checks
// are done and <m>:run has items (and, with resource shares, the worker holds its tokens), a
// run phase starts: Loader.Load, then runs, with checks taken between them, until no run is
// left or the time slice ends; then Unloader.Unload. Load and Unload are never called by an
// idle worker.
//
// # Resource shares
//
// <g>:share is the queue of workers wanting group g's token (its head holds it) and
// <g>:share:ttl scores each worker id with the expiry of its entry (epoch seconds), as in the
// upstream runtime, whose workers can take part in the same rotation.
//
//   - A worker joins a group's queue (RPUSH) only when its module has run work, and leaves it
//     (LREM, ZREM) as soon as it has none: an idle holder yields at once.
//   - It joins its groups one at a time in name order and keeps those it holds while waiting
//     for the next: two workers needing the same groups cannot deadlock.
//   - Holding every token, it runs for its slice (the smallest `seconds`); then, if another
//     worker waits in any of its groups, it unloads and leaves every group, and rejoins at the
//     tail: turns rotate round robin.
//   - Its entries are refreshed every ShareTTL/3 (TIMEOUT by default) by a heartbeat, so a
//     long run keeps its token. A waiting worker evicts a head whose entry has expired (a
//     crashed holder) and only that head: nobody alive loses a turn. A head without an entry
//     (an upstream worker just rotated there) gets one, so it expires if it is dead.
//
// Upstream workers register in every group at start and keep their turn for the whole slice
// even when idle; they still rotate correctly with Go workers.
//
// # Shutdown
//
// When Serve's context ends (Main: SIGTERM or SIGINT) the worker takes no more items, lets
// the current one finish for up to Config.ShutdownGrace (5 s), then cancels it and hands its
// item back to the head of its queue unchanged (same attempt: no failure is counted), calls
// Unload if a phase is open, leaves its share groups and returns; Main exits 0.
package sdk
