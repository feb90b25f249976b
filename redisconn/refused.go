package redisconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Refusal is why Redis refused a client in a way no retry can fix.
type Refusal int

const (
	NotRefused         Refusal = iota // unreachable or failing: worth retrying
	RefusedCredentials                // WRONGPASS, NOAUTH
	RefusedPermission                 // NOPERM: the ACL user lacks a command or key
	RefusedTLS                        // the server's certificate does not verify
)

// Classify tells a refusal that no retry can fix from an error worth retrying.
func Classify(err error) Refusal {
	var re redis.Error
	if errors.As(err, &re) {
		msg := strings.TrimPrefix(re.Error(), "ERR ")
		switch {
		case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"):
			return RefusedCredentials
		case strings.HasPrefix(msg, "NOPERM"):
			return RefusedPermission
		}
	}
	var verr *tls.CertificateVerificationError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	if errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) {
		return RefusedTLS
	}
	return NotRefused
}

// ErrRefused marks an error no retry can fix (Refused wraps it).
var ErrRefused = errors.New("redis refused the connection")

// Hints words, per program, what to fix for each kind of refusal. They name the settings to
// fix, never their values.
type Hints struct {
	Credentials string // WRONGPASS, NOAUTH
	Permission  string // NOPERM
	TLS         string // the certificate does not verify
}

// Refused returns err wrapped with ErrRefused and the matching hint when Redis refused in a way
// no retry can fix; nil otherwise (unreachable or failing: worth retrying).
func Refused(err error, h Hints) error {
	if err == nil {
		return nil
	}
	var hint string
	switch Classify(err) {
	case RefusedCredentials:
		hint = h.Credentials
	case RefusedPermission:
		hint = h.Permission
	case RefusedTLS:
		hint = h.TLS
	default:
		return nil
	}
	return fmt.Errorf("%w (%s): %w", ErrRefused, hint, err)
}
