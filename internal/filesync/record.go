package filesync

import "time"

// SyncRecord is the summary of a finished sync, as status shows it.
type SyncRecord struct {
	Reason   string    `json:"reason"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// DurationSeconds is Stats.Duration in seconds.
	DurationSeconds float64 `json:"duration_seconds"`
	Stats           Stats   `json:"stats"`
	Error           string  `json:"error,omitempty"`
}

// MissingState is what status and metrics show about missing files.
type MissingState struct {
	Documents int64          `json:"documents"` // missing documents kept on disk
	Retention time.Duration  `json:"-"`
	Purged    int64          `json:"purged"` // documents purged after their retention
	Confirm   bool           `json:"confirm_pending"`
	Report    *MissingReport `json:"report"`
}
