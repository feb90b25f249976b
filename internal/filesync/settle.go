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

// reannounceSettling marks the drives that appeared while some of their files were still
// being written as new again in this sync.
func (r *syncRun) reannounceSettling() {
	for d := range r.s.settlingDrives {
		r.newDrives[d] = true
		delete(r.s.settlingDrives, d)
	}
}

// noteUnsettled leaves a file being written for a later sync: a path already in the catalog
// keeps its row (and its document) as it is.
func (r *syncRun) noteUnsettled(rel, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Unsettled++
	if d := r.driveOf(rel); d != "" && r.newDrives[d] {
		// The drive just appeared but this file is not recorded yet: the sync that records it
		// announces the drive again, so its jobs still go first.
		r.s.settlingDrives[d] = true
	}
	r.s.log.Debug().Str("path", rel).Str("why", why).Msg("file still being written; a later sync takes it")
}
