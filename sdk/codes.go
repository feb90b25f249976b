package sdk

import "github.com/redis/go-redis/v9"

// Script return codes, named per script (scripts.go has each script's KEYS, ARGV and
// replies): the same integer means different things in different scripts. codes_test.go
// pins every integer literal a script returns to these names.

// claimScript answers {queue, item}, nil (nothing to take) or this code.
const claimShareWait int64 = 0 // a run waits, but this worker does not head every share list

// finishScript, handBackScript and finishClaimScript (which may also answer {queue, item}).
const (
	heldGone    int64 = 0  // the timeouts member is gone (reaped, or an identical item finished)
	heldDone    int64 = 1  // finished or handed back
	heldExpired int64 = -1 // the deadline passed: nothing changed, the reaper retries the item
)

// runNowScript answers {item}, heldGone, heldExpired or this code.
const runNowNotHolder int64 = 2 // this worker no longer heads every share list: nothing moved

// setAsideScript.
const (
	asideGone  int64 = 0 // the timeouts member is gone
	asideMoved int64 = 1 // the deadline moved
)

// acquireShareScript.
const (
	shareWaiting int64 = 0  // another worker holds the token: wait
	shareHeld    int64 = 1  // this worker holds the token
	shareNoWork  int64 = -1 // no run work: the worker left the group
)

// releaseShareScript answers this code only.
const shareReleased int64 = 1

// scripts records each script's source, for the pin test.
var scripts = map[*redis.Script]string{}

// newScript is redis.NewScript, remembering src.
func newScript(src string) *redis.Script {
	s := redis.NewScript(src)
	scripts[s] = src
	return s
}

// scriptCodes lists, for each script answering integer codes, every integer literal its Lua
// source returns.
var scriptCodes = map[*redis.Script][]int64{
	claimScript:          {claimShareWait},
	finishScript:         {heldGone, heldDone, heldExpired},
	finishClaimScript:    {heldGone, heldDone, heldExpired},
	handBackScript:       {heldGone, heldDone, heldExpired},
	runNowScript:         {heldGone, heldExpired, runNowNotHolder},
	setAsideScript:       {asideGone, asideMoved},
	acquireShareScript:   {shareWaiting, shareHeld, shareNoWork},
	releaseShareScript:   {shareReleased},
	heartbeatShareScript: {}, // one flag per group: 1 refreshed, 0 not in the list
}
