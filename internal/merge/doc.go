// Package merge consumes module results from modules:done and merges them into the catalog.
//
// A result is taken with BLMOVE into modules:done:processing (queue.NextDone) and removed only
// after the catalog committed it (queue.AckDone), so a crash at any point replays it at the
// next start (queue.RestoreDone); the catalog remembers every merged job token, so a replay
// changes nothing.
//
// Each payload goes through, in order:
//
//  1. limits before decoding: size (Config.MaxPayload), then one pass over the bytes (scan.go)
//     checking UTF-8, nesting depth, value count and duplicate keys, so a hostile payload is
//     never materialised; failures go to modules:quarantine with the reason;
//  2. protocol.ParseDone (the {"module", "document", "content"} form, or the legacy bare
//     document); a malformed envelope or document is quarantined;
//  3. the module must be configured (Config.Pipeline) and a valid name, else the result is
//     dropped and counted (UnknownModule);
//  4. the document must echo our job fields (protocol.FieldJob…), else the result came from a
//     core that is not us and is dropped as stale; an id that is not a safe directory name is
//     quarantined;
//  5. a module-reported error (protocol.DoneErrorField, even with an empty reason) ends the
//     attempt through queue.Fail (retry with backoff, or park); with
//     protocol.DonePermanentField it parks at once; a park is recorded in the catalog
//     (catalog.Park: `failures` names the module, `next` moves on) with the parked record's
//     reason and time, so a replay after a crash between the two writes the same bytes;
//  6. otherwise, if the job is still current (catalog.JobsByToken, one query per batch), content is validated
//     (chunk.ParseContent; bad content is quarantined and the attempt failed), written to
//     by-id/<id>/<module>/content.json, and the fields merged by catalog.Merge, which advances
//     `next`, dirties the document, its drives' markers and (with content) its chunks for the
//     outbox. A result for a job that is not current is dropped and counted (Stale), or
//     recognised as a replay (Replayed).
//
// Run retries a result Handle failed on (Redis or catalog errors) with a capped backoff;
// after maxHandleFailures failures in a row on the same payload it quarantines it with the
// error, so one result can never stall the others.
//
// # Merge rules
//
// Every top-level key of the result's document is merged except core fields
// (protocol.IsCoreField: id, paths, next, uid, failures, _hi_*…), which are ignored since
// modules echo them. Keys equal to a core field but for case (`ID`, `Paths`, `_HI_JOB`) and the
// empty key are dropped and counted (RejectedFields): Meilisearch would keep `ID` beside `id`,
// which only confuses. In the legacy form, "module" and "content" are the envelope's, not
// fields; "content" is treated as content in both forms. A result without content (or with
// null) leaves the module's content.json and chunks alone.
package merge
