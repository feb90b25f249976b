package protocol

// Redis key names. Every key the daemon or a module touches is built here, and keys_test.go
// pins each string: they are a contract between processes (docs/protocol.md lists them).
//
// Module names are validated by the daemon's configuration (ValidModuleName), so they never
// contain ':' and two modules' keys never collide.

// Global keys.
const (
	// TimeoutsKey is a ZSET shared by all modules: member TimeoutMember(queue, item), score the
	// deadline in epoch seconds (float). Workers ZADD/ZREM; the daemon's reaper reads it.
	TimeoutsKey = "timeouts"
	// DoneKey is a LIST of DoneMessage JSON: workers RPUSH, the daemon BLMOVEs from its head.
	DoneKey = "modules:done"
	// DoneProcessingKey is a LIST: results the daemon took from DoneKey and has not yet
	// committed (ours; additive).
	DoneProcessingKey = "modules:done:processing"
	// QuarantineKey is a LIST of JSON records {"reason", "payload", "at"}:
	// malformed results, with why they were set aside (ours).
	QuarantineKey = "modules:quarantine"
	// LockKey is a STRING holding the active daemon's owner token, with a TTL (ours).
	LockKey = "homeindex:lock"
	// EpochKey is a STRING: a random value written once per Redis data set, so the daemon can
	// tell that Redis lost its data (ours).
	EpochKey = "homeindex:epoch"
)

// Phase is the stage of a module job: check, then run.
type Phase string

// The two phases of a module job, as they appear in queue key names.
const (
	PhaseCheck Phase = "check"
	PhaseRun   Phase = "run"
)

// QueueKey is the LIST of items waiting for the phase: `<module>:check` or `<module>:run`.
func QueueKey(module string, p Phase) string { return module + ":" + string(p) }

// CheckKey is `<module>:check`, the LIST the daemon fills and workers LPOP.
func CheckKey(module string) string { return QueueKey(module, PhaseCheck) }

// RunKey is `<module>:run`, the LIST a worker RPUSHes to when check() returns true.
func RunKey(module string) string { return QueueKey(module, PhaseRun) }

// ProcessingKey is the processing LIST of a queue key: `<queue>:processing`. The queue is the
// `q` field of a timeouts member.
func ProcessingKey(queue string) string { return queue + ":processing" }

// CheckProcessingKey is `<module>:check:processing`, items a worker is checking.
func CheckProcessingKey(module string) string { return ProcessingKey(CheckKey(module)) }

// RunProcessingKey is `<module>:run:processing`, items a worker is running.
func RunProcessingKey(module string) string { return ProcessingKey(RunKey(module)) }

// FailedKey is `<module>:failed`, a HASH document id → parked-job record JSON
// (jobs that used up their attempts; written by the daemon, format in internal/queue) (ours).
func FailedKey(module string) string { return module + ":failed" }

// JobsKey is `homeindex:<module>:jobs`, a HASH document id → the exact string of the job's
// current item: every (document, module) job in flight, so a job is never queued twice
// (daemon-private).
func JobsKey(module string) string { return "homeindex:" + module + ":jobs" }

// RetryKey is `homeindex:<module>:retry`, a ZSET of RetryMember(phase, item) scored by the
// time (epoch ms, Redis clock) the item goes back to the head of its queue (daemon-private).
func RetryKey(module string) string { return "homeindex:" + module + ":retry" }

// SuspectsKey is `homeindex:<module>:suspects`, a ZSET of items that looked orphaned or lost
// at one sweep, scored by when (epoch ms, Redis clock) they were first seen so (daemon-private).
func SuspectsKey(module string) string { return "homeindex:" + module + ":suspects" }

// ShareKey is `<group>:share`, the LIST of worker ids taking turns on a resource share group.
func ShareKey(group string) string { return group + ":share" }

// ShareTTLKey is `<group>:share:ttl`, a ZSET worker id → turn deadline (epoch seconds).
func ShareTTLKey(group string) string { return group + ":share:ttl" }

// ValidModuleName reports whether name may be used as a module name: 1 to 64 characters from
// [a-z0-9_-]. Anything else could escape its key prefix.
func ValidModuleName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// ParseQueueKey splits a queue key (`<module>:check` or `<module>:run`, the `q` field of a
// timeouts member) into its module and phase. ok is false for anything else.
func ParseQueueKey(queue string) (module string, p Phase, ok bool) {
	for _, ph := range []Phase{PhaseCheck, PhaseRun} {
		suffix := ":" + string(ph)
		if len(queue) > len(suffix) && queue[len(queue)-len(suffix):] == suffix {
			m := queue[:len(queue)-len(suffix)]
			if ValidModuleName(m) {
				return m, ph, true
			}
		}
	}
	return "", "", false
}
