package filesync

import (
	"time"

	"github.com/homeindex/homeindex/internal/scanner"
)

// unsettled says whether a file changed too recently to be read: its mtime lies within
// SettleTime of now (on either side, so a clock a little behind the writer's counts too). A
// file still being written is not hashed and not handed to modules; the scheduler runs a
// follow-up sync once it has settled (Stats.Unsettled).
func (r *syncRun) unsettled(e scanner.Entry) bool {
	settle := r.s.cfg.SettleTime
	if settle <= 0 {
		return false
	}
	age := r.s.cfg.Now().Sub(time.Unix(0, e.MtimeNs))
	return age < settle && age > -settle
}

// noteUnsettled leaves a file being written for a later sync: a path already in the catalog
// keeps its row (and its document) as it is.
func (r *syncRun) noteUnsettled(rel, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Unsettled++
	r.seen[rel] = true
	r.s.log.Debug().Str("path", rel).Str("why", why).Msg("file still being written; a later sync takes it")
}
