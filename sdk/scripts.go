package sdk

// The worker's Lua scripts. Each runs atomically and reads time from the Redis server (TIME),
// never from the worker, so clock skew between hosts does not move deadlines. go-redis's
// Script.Run sends EVALSHA and falls back to EVAL after NOSCRIPT (a restarted Redis).

// luaNow defines now_s (float seconds) from the Redis server clock.
const luaNow = `
local t = redis.call('TIME')
local now_s = tonumber(t[1]) + tonumber(t[2]) / 1000000
`

// luaHeld ends the script unless the held item's timeouts member (KEYS[1] timeouts, ARGV[1]
// member) stands: 0 (heldGone) when it is gone, -1 (heldExpired) when its deadline has passed
// by the Redis clock (after luaNow).
const luaHeld = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
if tonumber(score) <= now_s then return -1 end
`

// luaHeadsShares defines heads_shares(first, worker): whether worker heads every resource-share
// list KEYS[first..], as a run needs.
const luaHeadsShares = `
local function heads_shares(first, worker)
  for i = first, #KEYS do
    if redis.call('LINDEX', KEYS[i], 0) ~= worker then return false end
  end
  return true
end
`

// luaTimeoutMember defines timeout_member(q, d): protocol.TimeoutMember in Lua, i.e. CPython's
// json.dumps({"q": q, "d": d}) byte for byte: ", " and ": " separators, only ' '..'~' pass
// through (but '"' and '\'), the short escapes \n \r \t \b \f, everything else \uXXXX in lower
// case with surrogate pairs above the BMP. Invalid UTF-8 bytes become \ufffd one by one, as Go's
// range over a string reads them. ASCII takes a fast path: Redis's cjson escapes every byte
// below 0x80 as CPython does, but for '/', which it writes as "\/" (a pattern-driven escape
// costs ~20 µs per 500-byte item; cjson ~2).
const luaTimeoutMember = `
local pyesc = {['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t', ['\b'] = '\\b', ['\f'] = '\\f'}
local function pyesc1(c)
  return pyesc[c] or string.format('\\u%04x', string.byte(c))
end
local function pyutf8(u)
  local b1, n = string.byte(u, 1), #u
  local need, cp, least = 0, 0, 0
  if b1 >= 194 and b1 <= 223 then need, cp, least = 2, b1 - 192, 128
  elseif b1 >= 224 and b1 <= 239 then need, cp, least = 3, b1 - 224, 2048
  elseif b1 >= 240 and b1 <= 244 then need, cp, least = 4, b1 - 240, 65536 end
  if need == 0 or n < need then return string.rep('\\ufffd', n) end
  for i = 2, need do cp = cp * 64 + (string.byte(u, i) - 128) end
  if cp < least or cp > 1114111 or (cp >= 55296 and cp <= 57343) then
    return string.rep('\\ufffd', n)
  end
  local out
  if cp >= 65536 then
    cp = cp - 65536
    out = string.format('\\u%04x\\u%04x', 55296 + math.floor(cp / 1024), 56320 + cp % 1024)
  else
    out = string.format('\\u%04x', cp)
  end
  return out .. string.rep('\\ufffd', n - need)
end
local function pystr(s)
  if not string.find(s, '[\128-\255]') then
    return (string.gsub(cjson.encode(s), '\\/', '/'))
  end
  s = string.gsub(s, '[%z\1-\31"\\\127]', pyesc1)
  if string.find(s, '[\128-\255]') then
    s = string.gsub(s, '[\192-\255][\128-\191]*', pyutf8)
    s = string.gsub(s, '[\128-\191]', '\\ufffd')
  end
  return '"' .. s .. '"'
end
local function timeout_member(q, d)
  return '{"q": ' .. pystr(q) .. ', "d": ' .. pystr(d) .. '}'
end
`

// claimScript takes the next item into its processing list and gives it a deadline in the
// same step, so the item is in a list at every instant (upstream LPOPs or BLPOPs first and
// records it after, and its BLMOVE call never works). Checks come first: they are cheap and
// need no share tokens. A worker whose checks always say yes (ARGV[4] not empty) and that may
// run now takes runs first, then a check item built for its uid (one holding ARGV[4],
// protocol.ItemUIDMarker) straight into its run: a check phase that cannot say no would only
// move the item from one list to the other. Any other check item is claimed as a check, so an
// item for another uid is set aside as a check, for a worker that checks it.
//
// KEYS[1] -> <m>:check                LIST  taken first (head)
// KEYS[2] -> <m>:check:processing     LIST  (tail)
// KEYS[3] -> <m>:run                  LIST  taken when KEYS[1] is empty and ARGV[2] is '1'
// KEYS[4] -> <m>:run:processing       LIST  (tail)
// KEYS[5] -> timeouts                 ZSET  member timeout_member(queue, item) -> deadline
// KEYS[6..] -> <g>:share              LIST  resource-share lists ARGV[3] must head to take a run
// ARGV[1] -> timeout seconds (decimal); ARGV[2] -> '1' if this worker may run now, else '0'
// ARGV[3] -> worker id (with KEYS[6..]); ARGV[4] -> its uid marker if its checks always say
// yes, else empty
//
// Returns: {queue, item}; nil if there is nothing to take; 0 if a run waits but ARGV[3] does
// not head every KEYS[6..] (nothing moved). The deadline is the Redis clock + ARGV[1], in
// epoch seconds. An item taken straight from KEYS[1] into its run is returned as a run
// ({KEYS[3], item}), its timeouts member naming KEYS[3], as if it had been checked and queued.
var claimScript = newScript(luaNow + luaHeadsShares + luaTimeoutMember + luaClaim + `
local r = claim(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], 6, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if r == 'share wait' then return 0 end
return r
`)

// luaClaim defines claim(check, checkProcessing, run, runProcessing, timeouts, firstShare,
// timeout, mayRun, worker, marker), claimScript's body over those keys and arguments (see
// there): {queue, item}; nil when there is nothing to take; 'share wait' when a run waits but
// worker does not head every share list KEYS[firstShare..].
const luaClaim = `
local function claim(kc, kcp, kr, krp, kt, first_share, timeout, may_run, worker, marker)
  local q, item = kc, nil
  if may_run == '1' and marker ~= '' then
    local from = kr
    if redis.call('LLEN', kr) == 0 then
      local head = redis.call('LINDEX', kc, 0)
      if head and string.find(head, marker, 1, true) then from = kc else from = nil end
    end
    if from then
      if not heads_shares(first_share, worker) then return 'share wait' end
      q = kr
      item = redis.call('LMOVE', from, krp, 'LEFT', 'RIGHT')
    end
  end
  if not item then
    item = redis.call('LMOVE', kc, kcp, 'LEFT', 'RIGHT')
    if not item then
      if may_run ~= '1' or redis.call('LLEN', kr) == 0 then return nil end
      if not heads_shares(first_share, worker) then return 'share wait' end
      q = kr
      item = redis.call('LMOVE', kr, krp, 'LEFT', 'RIGHT')
    end
  end
  redis.call('ZADD', kt, now_s + tonumber(timeout), timeout_member(q, item))
  return {q, item}
end
`

// finishScript ends a held item: it releases the deadline and the processing entry and pushes
// the outcome, only if the deadline still stands by the Redis clock.
//
// KEYS[1] -> timeouts                 ZSET
// KEYS[2] -> <m>:<phase>:processing   LIST
// KEYS[3] -> <m>:run or modules:done  LIST  destination (tail)
// ARGV[1] -> the item's timeouts member; ARGV[2] -> the item; ARGV[3] -> what to push
//
// Returns: 1 done; 0 the member is gone (reaped, or another worker's identical item finished
// first): the outcome is dropped; -1 the deadline passed: nothing changed, the reaper retries.
var finishScript = newScript(luaNow + luaHeld + luaFinish + `
return 1
`)

// luaFinish is finishScript's work once luaHeld has let it through: the deadline and the
// processing entry go, the outcome is pushed (KEYS and ARGV[1..3] as finishScript's).
const luaFinish = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 1, ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
`

// finishClaimScript is finishScript followed by claimScript in one step: a worker that goes
// on serving takes its next item as it sends the last one's outcome, one round trip per item
// where there were two. The next item is taken only if the outcome was sent.
//
// KEYS[1..3] -> finishScript's KEYS (timeouts, the held item's processing list, destination)
// KEYS[4..]  -> claimScript's KEYS (KEYS[8] is timeouts again, shares from KEYS[9])
// ARGV[1..3] -> finishScript's ARGV; ARGV[4..7] -> claimScript's ARGV[1..4]
//
// Returns: {queue, item} finished, and the next item taken (as claimScript answers it); 1
// finished, nothing taken (nothing waits, or a run waits for share tokens this worker does not
// hold); 0 and -1 as finishScript (nothing changed, nothing taken).
var finishClaimScript = newScript(luaNow + luaHeld + luaHeadsShares + luaTimeoutMember + luaClaim + luaFinish + `
local r = claim(KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], 9, ARGV[4], ARGV[5], ARGV[6], ARGV[7])
if type(r) == 'table' then return r end
return 1
`)

// runNowScript ends a held check that said yes and starts this worker's next run in one step,
// as finishScript to <m>:run followed by claimScript taking a run would: the item goes to the
// tail of <m>:run and the head of <m>:run moves to the run processing list with a run
// deadline. When <m>:run was empty the head is the item itself, which then moves straight
// across (the worker knows it already, so it sends its timeouts member as ARGV[4]); otherwise
// the items waiting there keep their turn (a plugged drive's jobs, queued first, run first).
//
// KEYS[1] -> timeouts                 ZSET
// KEYS[2] -> <m>:check:processing     LIST
// KEYS[3] -> <m>:run                  LIST
// KEYS[4] -> <m>:run:processing       LIST  (tail)
// KEYS[5..] -> <g>:share              LIST  resource-share lists ARGV[5] must head to take a run
// ARGV[1] -> the check's timeouts member; ARGV[2] -> the item; ARGV[3] -> timeout seconds
// (decimal); ARGV[4] -> the item's timeouts member as a run (protocol.TimeoutMember);
// ARGV[5] -> worker id
//
// Returns: {item} the run now held (ARGV[2] itself or the head of <m>:run), its deadline the
// Redis clock + ARGV[3]; 0 the check's member is gone; -1 its deadline passed (nothing
// changed: the reaper retries); 2 ARGV[5] no longer heads every KEYS[5..] (nothing changed:
// finish the check to <m>:run).
var runNowScript = newScript(luaNow + luaHeld + luaHeadsShares + luaTimeoutMember + `
if not heads_shares(5, ARGV[5]) then return 2 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 1, ARGV[2])
local deadline = now_s + tonumber(ARGV[3])
if redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('RPUSH', KEYS[4], ARGV[2])
  redis.call('ZADD', KEYS[1], deadline, ARGV[4])
  return {ARGV[2]}
end
redis.call('RPUSH', KEYS[3], ARGV[2])
local item = redis.call('LMOVE', KEYS[3], KEYS[4], 'LEFT', 'RIGHT')
redis.call('ZADD', KEYS[1], deadline, timeout_member(KEYS[3], item))
return {item}
`)

// setAsideScript moves a held item's deadline to the Redis clock + ARGV[2]: the item stays in
// its processing list, visible, and the reaper offers it again after that (uid mismatch).
//
// KEYS[1] -> timeouts  ZSET
// ARGV[1] -> the item's timeouts member; ARGV[2] -> seconds (decimal)
//
// Returns: 1 moved; 0 the member is gone.
var setAsideScript = newScript(luaNow + `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now_s + tonumber(ARGV[2]), ARGV[1])
return 1
`)

// handBackScript returns a held item to the head of its queue (shutdown), unstarted: same
// string, same attempt.
//
// KEYS[1] -> timeouts                 ZSET
// KEYS[2] -> <m>:<phase>:processing   LIST
// KEYS[3] -> <m>:<phase>              LIST  destination (head)
// ARGV[1] -> the item's timeouts member; ARGV[2] -> the item
//
// Returns: 1 handed back; 0 the member is gone; -1 the deadline passed (left for the reaper).
var handBackScript = newScript(luaNow + luaHeld + `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 1, ARGV[2])
redis.call('LPUSH', KEYS[3], ARGV[2])
return 1
`)

// Resource shares. <g>:share is the queue of workers that want group g's token, its head the
// holder; <g>:share:ttl scores each by when its entry expires (epoch seconds). Upstream Python
// workers use the same keys: they register at the tail, run while at the head, rotate by
// LPOP+RPUSH and evict an expired head.

// acquireShareScript is one look at a group's turn: leave the group if the module has no run
// work; otherwise join at the tail if absent, refresh this worker's entry, evict expired heads
// (only them: nobody alive loses a place), and report whether this worker heads the queue.
//
// KEYS[1] -> <g>:share      LIST  worker ids, head = holder
// KEYS[2] -> <g>:share:ttl  ZSET  worker id -> expiry (epoch seconds)
// KEYS[3] -> <m>:run        LIST  this module's run queue
// ARGV[1] -> worker id; ARGV[2] -> entry TTL seconds (decimal)
//
// Returns: 1 this worker holds the token; 0 it waits; -1 no run work: it left the group. A
// head without a score (an upstream worker just rotated there) gets one, so it expires if dead.
var acquireShareScript = newScript(luaNow + `
local id, exp = ARGV[1], now_s + tonumber(ARGV[2])
if redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('LREM', KEYS[1], 0, id)
  redis.call('ZREM', KEYS[2], id)
  return -1
end
if not redis.call('LPOS', KEYS[1], id) then redis.call('RPUSH', KEYS[1], id) end
redis.call('ZADD', KEYS[2], exp, id)
for _ = 1, 64 do
  local head = redis.call('LINDEX', KEYS[1], 0)
  if head == id then return 1 end
  local score = redis.call('ZSCORE', KEYS[2], head)
  if not score then
    redis.call('ZADD', KEYS[2], exp, head)
    return 0
  end
  if tonumber(score) > now_s then return 0 end
  redis.call('LREM', KEYS[1], 0, head)
  redis.call('ZREM', KEYS[2], head)
end
return 0
`)

// releaseShareScript leaves every group (no run work, or shutdown).
//
// KEYS[2i-1] -> <g>:share  LIST; KEYS[2i] -> <g>:share:ttl  ZSET
// ARGV[1] -> worker id
//
// Returns: 1.
var releaseShareScript = newScript(`
for i = 1, #KEYS, 2 do
  redis.call('LREM', KEYS[i], 0, ARGV[1])
  redis.call('ZREM', KEYS[i + 1], ARGV[1])
end
return 1
`)

// heartbeatShareScript keeps this worker's entries alive in the groups it is in, during long
// runs as while waiting.
//
// KEYS[2i-1] -> <g>:share  LIST; KEYS[2i] -> <g>:share:ttl  ZSET
// ARGV[1] -> worker id; ARGV[2] -> entry TTL seconds (decimal)
//
// Returns: one integer per group: 1 refreshed (the worker is in the list), 0 not in it.
var heartbeatShareScript = newScript(luaNow + `
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('LPOS', KEYS[i], ARGV[1]) then
    redis.call('ZADD', KEYS[i + 1], now_s + tonumber(ARGV[2]), ARGV[1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
`)
