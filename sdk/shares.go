package sdk

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/homeindex/homeindex/protocol"
	"github.com/redis/go-redis/v9"
)

// shares takes turns on the worker's resource-share groups (scripts.go has the wire details).
//
//   - A worker queues for tokens only while its module has run work, and leaves every queue
//     as soon as it has none, so an idle worker never holds a turn.
//   - It queues for its groups one at a time in name order and keeps those it holds while
//     waiting for the next (ordered acquisition: two workers needing gpu+licence cannot each
//     hold one and wait for the other).
//   - Holding every token, it runs jobs for its time slice (the smallest `seconds` of its
//     groups); at the slice's end it yields if anyone waits in any group, rejoining at the tail.
//   - A heartbeat refreshes its entries every TTL/3, during long runs as while waiting; a
//     crashed worker's entries expire after the TTL and the next waiter evicts them when they
//     reach the head, without moving anyone else.
type shares struct {
	w        *Worker
	groups   []string // names, in acquisition order
	lists    []string // <g>:share, same order: the run claim checks this worker heads each
	pairs    []string // <g>:share, <g>:share:ttl for every group
	slice    time.Duration
	ttl      string        // entry TTL in seconds, for the scripts
	poll     time.Duration // how often a waiting worker looks at its turn
	acquired int           // groups held so far, in order (loop goroutine only)
	holding  atomic.Bool   // every group held
	since    time.Time     // when the current slice began (loop goroutine only)
}

func newShares(w *Worker) *shares {
	s := &shares{w: w, slice: w.cfg.Shares[0].Slice, ttl: seconds(w.cfg.ShareTTL)}
	for _, g := range w.cfg.Shares {
		s.groups = append(s.groups, g.Name)
		s.slice = min(s.slice, g.Slice)
	}
	slices.Sort(s.groups)
	for _, g := range s.groups {
		s.lists = append(s.lists, protocol.ShareKey(g))
		s.pairs = append(s.pairs, protocol.ShareKey(g), protocol.ShareTTLKey(g))
	}
	s.poll = min(max(min(w.cfg.ShareTTL, s.slice)/10, 10*time.Millisecond), time.Second)
	return s
}

type turnState int

const (
	turnHeld    turnState = iota // every token held: run
	turnWaiting                  // queued, not at the head of every group yet
	turnIdle                     // no run work: left every group
	turnYield                    // slice over and someone waits: end the phase, then release
)

// turn advances this worker's turn by one look and says where it stands.
func (s *shares) turn(ctx context.Context) (turnState, error) {
	if s.holding.Load() {
		if time.Since(s.since) < s.slice {
			return turnHeld, nil
		}
		waiting, err := s.othersWaiting(ctx)
		if err != nil {
			return 0, err
		}
		if !waiting {
			s.since = time.Now() // nobody to yield to: a new slice
			return turnHeld, nil
		}
		return turnYield, nil
	}
	for s.acquired < len(s.groups) {
		g := s.groups[s.acquired]
		r, err := acquireShareScript.Run(ctx, s.w.rdb,
			[]string{protocol.ShareKey(g), protocol.ShareTTLKey(g), s.w.keys.run},
			s.w.cfg.WorkerID, s.ttl).Int64()
		if err != nil {
			return 0, fmt.Errorf("take turn in share %s: %w", g, err)
		}
		switch r {
		case shareHeld:
			s.acquired++
		case shareWaiting:
			return turnWaiting, nil
		case shareNoWork:
			return turnIdle, s.release(ctx)
		default:
			return 0, fmt.Errorf("take turn in share %s: unexpected reply %d", g, r)
		}
	}
	s.holding.Store(true)
	s.since = time.Now()
	s.w.log.Debug().Strs("shares", s.groups).Msg("holding share tokens")
	return turnHeld, nil
}

// othersWaiting reports whether another worker queues in any of the groups.
func (s *shares) othersWaiting(ctx context.Context) (bool, error) {
	cmds, err := s.w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range s.lists {
			p.LLen(ctx, k)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("look at share queues: %w", err)
	}
	for _, c := range cmds {
		if n, _ := c.(*redis.IntCmd).Result(); n > 1 {
			return true, nil
		}
	}
	return false, nil
}

// release leaves every group: the next worker's turn starts at once.
func (s *shares) release(ctx context.Context) error {
	s.acquired = 0
	if s.holding.Swap(false) {
		s.w.log.Debug().Strs("shares", s.groups).Msg("released share tokens")
	}
	if err := releaseShareScript.Run(ctx, s.w.rdb, s.pairs, s.w.cfg.WorkerID).Err(); err != nil {
		return fmt.Errorf("leave shares: %w", err)
	}
	return nil
}

// lost forgets the turn after the run claim found this worker no longer heads a group.
func (s *shares) lost() {
	s.acquired = 0
	s.holding.Store(false)
	s.w.log.Warn().Strs("shares", s.groups).Msg("share token lost before the run started: queueing again")
}

// heartbeat refreshes this worker's share entries every TTL/3 until ctx ends.
func (s *shares) heartbeat(ctx context.Context) {
	t := time.NewTicker(max(s.w.cfg.ShareTTL/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		in, err := heartbeatShareScript.Run(ctx, s.w.rdb, s.pairs, s.w.cfg.WorkerID, s.ttl).Int64Slice()
		if err != nil || !s.holding.Load() {
			continue // the loop reports Redis trouble
		}
		for i, ok := range in {
			if ok == 0 && i < len(s.groups) {
				s.w.log.Error().Str("share", s.groups[i]).Msg("share token lost while holding it: another worker evicted this one (was it stalled past the TTL?)")
			}
		}
	}
}

// seconds formats d as decimal seconds for a script argument.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
