package queue

import (
	"context"
	"fmt"

	"github.com/homeindex/homeindex/protocol"
)

// purgePage bounds the items read per command while purging.
const purgePage = 256

// PurgeUID removes a module's waiting items built for another uid (or without job fields):
// from <module>:check, <module>:run, the retry set, and parked jobs. Their in-flight entries
// are released and the jobs returned, so the catalog can dispatch them again with the current
// uid. Call it at start, before dispatching, when the module's uid changed. Items in
// processing lists are left to their worker and the reaper. It reads bounded pages (never a
// whole list in one command); cost O(queued items).
func (c *Client) PurgeUID(ctx context.Context, m Module) ([]Dropped, error) {
	if !protocol.ValidModuleName(m.Name) {
		return nil, fmt.Errorf("purge: invalid module name %q", m.Name)
	}
	stale := func(item string) bool {
		uid, ours := protocol.ItemUID(item)
		return !ours || uid != m.UID
	}
	var out []Dropped
	for _, key := range []string{protocol.CheckKey(m.Name), protocol.RunKey(m.Name)} {
		for start := int64(0); ; {
			page, err := c.rdb.LRange(ctx, key, start, start+purgePage-1).Result()
			if err != nil {
				return out, fmt.Errorf("purge %s: %w", key, err)
			}
			var members []string
			for _, it := range page {
				if stale(it) {
					members = append(members, it)
				}
			}
			d, err := c.dropStale(ctx, m, key, "list", members)
			if err != nil {
				return out, fmt.Errorf("purge: %w", err)
			}
			out = append(out, d...)
			if len(page) < purgePage {
				break
			}
			start += int64(len(page) - len(d)) // removed items shifted the rest left
		}
	}
	retry := protocol.RetryKey(m.Name)
	for start := int64(0); ; {
		page, err := c.rdb.ZRange(ctx, retry, start, start+purgePage-1).Result()
		if err != nil {
			return out, fmt.Errorf("purge %s: %w", retry, err)
		}
		var members []string
		for _, mem := range page {
			if _, item, ok := cutPhase(mem); !ok || stale(item) {
				members = append(members, mem)
			}
		}
		d, err := c.dropStale(ctx, m, retry, "zset", members)
		if err != nil {
			return out, fmt.Errorf("purge: %w", err)
		}
		out = append(out, d...)
		if len(page) < purgePage {
			break
		}
		start += int64(len(page) - len(d))
	}
	var records []string
	err := c.scanFailed(ctx, m.Name, func(_, raw string) bool {
		var r failedRecord
		if decodeFailed(raw, &r) != nil || stale(r.Item) {
			records = append(records, raw)
		}
		return true
	})
	if err != nil {
		return out, fmt.Errorf("purge: %w", err)
	}
	for i := 0; i < len(records); i += purgePage {
		d, err := c.dropStale(ctx, m, protocol.FailedKey(m.Name), "hash", records[i:min(i+purgePage, len(records))])
		if err != nil {
			return out, fmt.Errorf("purge: %w", err)
		}
		out = append(out, d...)
	}
	return out, nil
}
