package protocol

import "encoding/json"

// DonePermanentField is an optional top-level boolean of a done message (our extension), sent
// only together with DoneErrorField: true means the module judged that another attempt cannot
// succeed (sdk.Permanent), so the job should be parked at once instead of retried.
const DonePermanentField = JobFieldPrefix + "permanent"

// DonePermanent reports whether a raw done message has DonePermanentField set to true. Keys
// match exactly (JSON is case-sensitive); anything unreadable reads as false.
func DonePermanent(raw []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	return string(top[DonePermanentField]) == "true"
}
