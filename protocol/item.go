package protocol

// JobFieldPrefix starts every field the daemon adds to a queue item beyond the document and
// `uid` (attempt, token, ...). Modules echo them back; they are never merged into documents.
const JobFieldPrefix = "_hi_"
