package queue

import (
	"errors"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// ErrRedisRefused marks a Connect error that no retry can fix: the server rejected the
// credentials (WRONGPASS, NOAUTH), the ACL user may not run what the daemon needs at connect
// (NOPERM), or the server's TLS certificate does not verify.
var ErrRedisRefused = errors.New("redis refused the connection")

// Refused returns err, a Connect error, wrapped with ErrRedisRefused and a hint when it is one
// of those; nil otherwise (the server is unreachable or failing: worth retrying). The hint
// names the variables to fix, never their values.
func Refused(err error) error {
	if err == nil {
		return nil
	}
	var hint string
	switch protocol.ClassifyRefusal(err) {
	case protocol.RefusedCredentials:
		hint = "check the user and password in REDIS_HOST"
	case protocol.RefusedPermission:
		hint = "the ACL user lacks a command or key the daemon needs (README, Security)"
	case protocol.RefusedTLS:
		hint = "the server's TLS certificate does not verify: check REDIS_TLS_CA_FILE and the host name"
	default:
		return nil
	}
	return fmt.Errorf("%w (%s): %w", ErrRedisRefused, hint, err)
}
