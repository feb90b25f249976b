package config

import (
	"strconv"
	"strings"
	"time"
)

// Change detection variables (README "How changes are detected").
const (
	envWatchLimit     = "WATCH_LIMIT"
	envRewalkInterval = "REWALK_INTERVAL"
	envSettleTime     = "SETTLE_TIME"
)

// Change detection defaults.
const (
	DefaultWatchPercent   = 50 // WATCH_LIMIT: half of the kernel's max_user_watches
	DefaultRewalkInterval = 30 * time.Second
	DefaultSettleTime     = 5 * time.Second
	// MaxSettleTime is the longest SETTLE_TIME: a batch of changes waits at most this long
	// however busy the tree is.
	MaxSettleTime = 30 * time.Second
)

// Watch tunes change detection.
type Watch struct {
	// Limit is WATCH_LIMIT as a count of inotify watches (0: none, re-walks only), used when
	// Percent is 0. Percent is WATCH_LIMIT given as "N%" of the kernel's max_user_watches;
	// default 50%.
	Limit   int
	Percent int
	// Rewalk is REWALK_INTERVAL: how often directories without a watch are re-walked; default
	// 30s, at least 1s.
	Rewalk time.Duration
	// Settle is SETTLE_TIME: how long the tree must be quiet before a sync, and how long a
	// file must be left alone before it is read; default 5s, 0 to 30s.
	Settle time.Duration
}

func (e *env) watch(c *Config) {
	w := &c.Watch
	w.Percent = DefaultWatchPercent
	if v := e.value(envWatchLimit); v != "" {
		if p, ok := strings.CutSuffix(v, "%"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > 90 {
				e.problemf(envWatchLimit, v, "a share must be from 1%% to 90%% of max_user_watches")
			} else {
				w.Percent = n
			}
		} else if n, err := strconv.Atoi(v); err != nil || n < 0 {
			e.problemf(envWatchLimit, v, "must be a number of watches (0 for none) or a share such as 50%%")
		} else {
			w.Limit, w.Percent = n, 0
		}
	}
	w.Rewalk = e.duration(envRewalkInterval, DefaultRewalkInterval)
	if w.Rewalk > 0 && w.Rewalk < time.Second {
		e.problemf(envRewalkInterval, e.value(envRewalkInterval), "must be at least 1s")
		w.Rewalk = DefaultRewalkInterval
	}
	w.Settle = DefaultSettleTime
	if v := e.value(envSettleTime); v != "" {
		d, err := parseDuration(v)
		switch {
		case err != nil:
			e.problemf(envSettleTime, v, "%v", err)
		case d < 0 || d > MaxSettleTime:
			e.problemf(envSettleTime, v, "must be from 0 to %s", MaxSettleTime)
		default:
			w.Settle = d
		}
	}
}
