package e2e

// Support for the bad-work and security fault tests (fault_q*, fault_s*, fault_meili*): the
// size switch, the ACL rules the README documents, a stack on a secured Redis, a hostile
// module played by the test, log counting, RSS and directory-tree snapshots. Names start with
// qs so they never collide with the other fault files' helpers.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/homeindex/homeindex/internal/testutil/redistest"
	"github.com/homeindex/homeindex/protocol"
)

// qsFull reports whether the fault suite runs at full size (FAULT_FULL=1, `make fault`);
// otherwise every case runs at a reduced size that keeps `make test` short.
func qsFull() bool { return os.Getenv("FAULT_FULL") == "1" }

// qsSize picks the reduced or the full size.
func qsSize(reduced, full int) int {
	if qsFull() {
		return full
	}
	return reduced
}

// daemonACLRules is the least-privilege ACL rule line for homeindexd (README, Security): its
// own keys (homeindex:*, modules:*, timeouts and every module's queues and failed hash) and
// only the commands internal/queue sends (scripts included: Redis checks each call a script
// makes). INFO is read-only and lets the daemon warn about eviction and persistence; no
// @admin or @dangerous command beyond it (no KEYS, FLUSHALL, CONFIG, DEBUG).
func daemonACLRules(user, password string) string {
	return user + " on >" + password + " resetkeys ~homeindex:* ~modules:* ~timeouts" +
		" ~*:check ~*:check:processing ~*:run ~*:run:processing ~*:failed resetchannels -@all" +
		" +hello +ping +select +info +time +script|load +evalsha +eval" +
		" +blmove +lmove +lpop +llen +lrange +lindex +lpos +lpush +rpush +lrem" +
		" +get +set +del +pttl +hget +hmget +hset +hsetnx +hdel +hexists +hlen +hscan" +
		" +zadd +zrem +zscore +zrange +zrangebyscore +zcard"
}

// moduleACLRules is the ACL rule line for a Go SDK module (README, Security): read and write
// its own four queues, the shared timeouts set and its share groups' keys; push (and only
// push) to modules:done. Redis checks a script's declared keys against one selector, so
// scripts get a selector of their own that also names modules:done, while every call inside
// them is checked again: RPUSH is the only command allowed on modules:done.
func moduleACLRules(user, password, module string, groups ...string) string {
	keys := []string{"~" + protocol.CheckKey(module), "~" + protocol.CheckProcessingKey(module),
		"~" + protocol.RunKey(module), "~" + protocol.RunProcessingKey(module), "~" + protocol.TimeoutsKey}
	for _, g := range groups {
		keys = append(keys, "~"+protocol.ShareKey(g), "~"+protocol.ShareTTLKey(g))
	}
	k := strings.Join(keys, " ")
	return user + " on >" + password + " resetkeys " + k + " resetchannels -@all" +
		" +hello +ping +time +llen +lindex +lpos +lmove +blmove +lpush +rpush +lrem +zadd +zrem +zscore" +
		" (" + k + " ~" + protocol.DoneKey + " +evalsha +eval)" +
		" (%W~" + protocol.DoneKey + " +rpush)"
}

// withRedis makes the stack use srv (instead of the Redis newStack started, which stays idle)
// reached at REDIS_HOST host, trusting srv's test CA when it speaks TLS. Modules started
// later get the same settings through qsModuleEnv.
func withRedis(srv *redistest.Server, host string) stackOption {
	return func(s *stack) {
		s.Redis = srv
		s.Daemon.Env["REDIS_HOST"] = host
		if ca := srv.CAFile(); ca != "" {
			s.Daemon.Env["REDIS_TLS_CA_FILE"] = ca
		}
	}
}

// qsModuleEnv is the environment pairs (for newModule) reaching srv as host.
func qsModuleEnv(srv *redistest.Server, host string) []string {
	kv := []string{"REDIS_HOST", host}
	if ca := srv.CAFile(); ca != "" {
		kv = append(kv, "REDIS_TLS_CA_FILE", ca)
	}
	return kv
}

// qsLogLines parses the JSON lines of a process's log (every incarnation); other lines (the
// harness's start banners) are skipped.
func qsLogLines(p *proc) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.Log()))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// qsLogged returns the log lines whose message is msg.
func qsLogged(p *proc, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range qsLogLines(p) {
		if l["message"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// qsPid is the process id of p's current incarnation.
func qsPid(t testing.TB, p *proc) int {
	t.Helper()
	cmd, _ := p.current()
	if cmd == nil || cmd.Process == nil {
		t.Fatalf("%s: not started", p.name)
	}
	return cmd.Process.Pid
}

// qsMemKB reads a field of /proc/<pid>/status in kB (VmHWM: peak resident set; VmRSS: now).
func qsMemKB(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// qsTree snapshots every file, directory and link under root (path → kind, size, mode,
// mtime, link target), skipping the named top-level entries.
func qsTree(t testing.TB, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		desc := fmt.Sprintf("%v %d %s", info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano))
		if info.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			desc += " -> " + target
		}
		if info.IsDir() {
			desc = fmt.Sprintf("%v dir", info.Mode()) // a directory's mtime moves with atomic writes inside
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// qsDiff lists what differs between two snapshots.
func qsDiff(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, fmt.Sprintf("changed %s: %s → %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "created "+k)
		}
	}
	sort.Strings(d)
	return d
}

// hostile plays a module by hand: it claims items the daemon dispatched, exactly as a worker
// does (the item moves to the processing list and gets a long deadline, so neither the reaper
// nor the orphan sweep touches it), and pushes whatever results a test wants.
type hostile struct {
	t      *testing.T
	rdb    *redis.Client
	module string
}

// claim takes the next dispatched item of the module's check queue, waiting for one.
func (h hostile) claim() string {
	h.t.Helper()
	ctx := context.Background()
	var item string
	waitUntil(h.t, 60*time.Second, "an item dispatched to "+h.module, func() error {
		it, err := h.rdb.LMove(ctx, protocol.CheckKey(h.module), protocol.CheckProcessingKey(h.module), "LEFT", "RIGHT").Result()
		if err != nil {
			return fmt.Errorf("LMOVE: %w", err)
		}
		item = it
		return nil
	})
	deadline := float64(time.Now().Add(10*time.Minute).UnixNano()) / 1e9
	member := protocol.TimeoutMember(protocol.CheckKey(h.module), item)
	if err := h.rdb.ZAdd(ctx, protocol.TimeoutsKey, redis.Z{Score: deadline, Member: member}).Err(); err != nil {
		h.t.Fatal(err)
	}
	return item
}

// claimN claims n items and returns them by document id.
func (h hostile) claimN(n int) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for len(out) < n {
		item := h.claim()
		info, err := protocol.ParseItem(item)
		if err != nil {
			h.t.Fatal(err)
		}
		out[info.ID] = item
	}
	return out
}

// push appends results to modules:done, as workers do (RPUSH).
func (h hostile) push(payloads ...string) {
	h.t.Helper()
	args := make([]any, len(payloads))
	for i, p := range payloads {
		args[i] = p
	}
	if err := h.rdb.RPush(context.Background(), protocol.DoneKey, args...).Err(); err != nil {
		h.t.Fatal(err)
	}
}

// qsResult is a done message of module for item: the document is the item's JSON with the
// extra members (raw JSON, e.g. `"note":"x"`) appended; content is raw JSON or "".
func qsResult(module, item, extra, content string) string {
	doc := item
	if extra != "" {
		doc = strings.TrimSuffix(strings.TrimSpace(item), "}") + "," + extra + "}"
	}
	var b bytes.Buffer
	b.WriteString(`{"module":`)
	mb, _ := json.Marshal(module)
	b.Write(mb)
	b.WriteString(`,"document":`)
	b.WriteString(doc)
	if content != "" {
		b.WriteString(`,"content":`)
		b.WriteString(content)
	}
	b.WriteByte('}')
	return b.String()
}

// qsQuarantine reads every modules:quarantine record.
func qsQuarantine(t testing.TB, rdb *redis.Client) []struct{ Reason, Payload string } {
	t.Helper()
	raws, err := rdb.LRange(context.Background(), protocol.QuarantineKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]struct{ Reason, Payload string }, len(raws))
	for i, r := range raws {
		var rec struct {
			Reason  string `json:"reason"`
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal([]byte(r), &rec); err != nil {
			t.Fatalf("quarantine record %d: %v", i, err)
		}
		out[i].Reason, out[i].Payload = rec.Reason, rec.Payload
	}
	return out
}

// qsDoneEmpty is a waitUntil condition: modules:done and modules:done:processing are empty
// (the merger handled everything pushed).
func qsDoneEmpty(rdb *redis.Client) func() error {
	return func() error {
		ctx := context.Background()
		for _, k := range []string{protocol.DoneKey, protocol.DoneProcessingKey} {
			n, err := rdb.LLen(ctx, k).Result()
			if err != nil || n != 0 {
				return fmt.Errorf("%s holds %d (%v)", k, n, err)
			}
		}
		return nil
	}
}

// qsRawDoc reads document.json as bytes.
func (s *stack) qsRawDoc(id string) []byte {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Meta, "by-id", id, "document.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}
