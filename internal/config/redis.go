package config

import (
	"errors"

	"github.com/homeindex/homeindex/redisconn"
)

// parseRedisHost is redisconn.Parse with the error's "redis host %q" prefix removed (the
// problem list names the variable and the redacted value itself).
func parseRedisHost(s string) (redisconn.Endpoint, error) {
	r, err := redisconn.Parse(s)
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return r, err
}
