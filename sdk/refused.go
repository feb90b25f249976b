package sdk

import "github.com/homeindex/homeindex/redisconn"

// errRedisRefused marks Redis errors no retry can fix: wrong credentials (WRONGPASS, NOAUTH),
// an ACL user without a command or key the worker needs (NOPERM), or a server certificate
// that does not verify. The worker stops on them (exit 1) instead of retrying forever.
var errRedisRefused = redisconn.ErrRefused

// refusedHints are the SDK's words for each refusal: they name the variables to fix, never
// their values.
var refusedHints = redisconn.Hints{
	Credentials: "check the user and password in " + EnvRedisHost,
	Permission:  "the module's ACL user lacks a command or key the SDK needs",
	TLS:         "the server's TLS certificate does not verify: check " + EnvRedisTLSCAFile + " and the host name",
}

// refused returns err wrapped with errRedisRefused and a hint when it is one of those; nil
// otherwise.
func refused(err error) error { return redisconn.Refused(err, refusedHints) }
