package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// allScripts lists every script with its source, so Connect can load them before anything is
// pipelined: a pipeline sends only EVALSHA and cannot fall back to EVAL on NOSCRIPT.
var allScripts []struct {
	s   *redis.Script
	src string
}

// newScript registers a script. src may start with shared Lua (luaNow, luaRetryOrPark).
func newScript(src string) *redis.Script {
	s := redis.NewScript(src)
	allScripts = append(allScripts, struct {
		s   *redis.Script
		src string
	}{s, src})
	return s
}

// loadScripts loads every script in one pipeline. (redis.Script.Load cannot be pipelined: it
// would record the not-yet-received empty digest.)
func (c *Client) loadScripts(ctx context.Context) error {
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(allScripts))
	for i, sc := range allScripts {
		cmds[i] = pipe.ScriptLoad(ctx, sc.src)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("load redis scripts: %w", err)
	}
	for i, sc := range allScripts {
		if cmds[i].Val() != sc.s.Hash() {
			return fmt.Errorf("load redis scripts: digest %q, want %q", cmds[i].Val(), sc.s.Hash())
		}
	}
	return nil
}

// scriptCall is one script invocation for runScripts.
type scriptCall struct {
	s    *redis.Script
	keys []string
	args []any
}

// runScripts runs the calls in one pipeline and returns one Cmd per call, in order; each
// script is atomic, the batch is not. After a Redis restart (empty script cache) it loads the
// scripts and runs the batch again, which is safe because a NOSCRIPT call did nothing.
func (c *Client) runScripts(ctx context.Context, calls []scriptCall) ([]*redis.Cmd, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	cmds, err := c.pipeEvalSha(ctx, calls)
	if err != nil && hasNoScript(cmds) {
		if err := c.loadScripts(ctx); err != nil {
			return nil, err
		}
		cmds, err = c.pipeEvalSha(ctx, calls)
	}
	var reply redis.Error
	if err != nil && !errors.As(err, &reply) {
		return nil, err // not a reply from Redis: the batch did not run (connection down)
	}
	return cmds, nil // per-call errors are in cmds
}

func (c *Client) pipeEvalSha(ctx context.Context, calls []scriptCall) ([]*redis.Cmd, error) {
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, sc := range calls {
		cmds[i] = sc.s.EvalSha(ctx, pipe, sc.keys, sc.args...)
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}

func hasNoScript(cmds []*redis.Cmd) bool {
	for _, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			return true
		}
	}
	return false
}

// luaNow defines now_ms (integer milliseconds) and now_s (float seconds) from the Redis
// server clock, which every script uses rather than the caller's.
const luaNow = `
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_s = tonumber(t[1]) + tonumber(t[2]) / 1000000
`

// Script reply helpers.

func replySlice(op string, v any) ([]any, error) {
	s, ok := v.([]any)
	if !ok {
		return nil, unexpected(op, v)
	}
	return s, nil
}
