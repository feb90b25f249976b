package sdk

import (
	"errors"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// errRedisRefused marks Redis errors no retry can fix: wrong credentials (WRONGPASS, NOAUTH),
// an ACL user without a command or key the worker needs (NOPERM), or a server certificate
// that does not verify. The worker stops on them (exit 1) instead of retrying forever.
var errRedisRefused = errors.New("redis refused the connection")

// refused returns err wrapped with errRedisRefused and a hint when it is one of those; nil
// otherwise. The hint names the variables to fix, never their values.
func refused(err error) error {
	if err == nil {
		return nil
	}
	var hint string
	switch protocol.ClassifyRefusal(err) {
	case protocol.RefusedCredentials:
		hint = "check the user and password in " + EnvRedisHost
	case protocol.RefusedPermission:
		hint = "the module's ACL user lacks a command or key the SDK needs"
	case protocol.RefusedTLS:
		hint = "the server's TLS certificate does not verify: check " + EnvRedisTLSCAFile + " and the host name"
	default:
		return nil
	}
	return fmt.Errorf("%w (%s): %w", errRedisRefused, hint, err)
}
