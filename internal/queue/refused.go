package queue

import "github.com/homeindex/homeindex/redisconn"

// ErrRedisRefused marks a Connect error that no retry can fix: the server rejected the
// credentials (WRONGPASS, NOAUTH), the ACL user may not run what the daemon needs at connect
// (NOPERM), or the server's TLS certificate does not verify.
var ErrRedisRefused = redisconn.ErrRefused

// refusedHints are the daemon's words for each refusal.
var refusedHints = redisconn.Hints{
	Credentials: "check the user and password in REDIS_HOST",
	Permission:  "the ACL user lacks a command or key the daemon needs (README, Security)",
	TLS:         "the server's TLS certificate does not verify: check REDIS_TLS_CA_FILE and the host name",
}

// Refused returns err, a Connect error, wrapped with ErrRedisRefused and a hint when it is one
// of those; nil otherwise (the server is unreachable or failing: worth retrying). The hint
// names the variables to fix, never their values.
func Refused(err error) error { return redisconn.Refused(err, refusedHints) }
