package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
)

// Refusal is why Redis refused a client in a way no retry can fix.
type Refusal int

const (
	NotRefused         Refusal = iota // unreachable or failing: worth retrying
	RefusedCredentials                // WRONGPASS, NOAUTH
	RefusedPermission                 // NOPERM: the ACL user lacks a command or key
	RefusedTLS                        // the server's certificate does not verify
)

// redisError is go-redis's redis.Error (a reply from the server), matched without importing
// go-redis here.
type redisError interface {
	error
	RedisError()
}

// ClassifyRefusal tells a refusal that no retry can fix from an error worth retrying. The
// daemon and the SDK each word their own hint around it.
func ClassifyRefusal(err error) Refusal {
	var re redisError
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
