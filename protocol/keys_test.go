package protocol

import "testing"

// TestKeys pins every key name: they are shared with module processes (docs/protocol.md) and must
// never change by accident.
func TestKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{TimeoutsKey, "timeouts"},
		{DoneKey, "modules:done"},
		{DoneProcessingKey, "modules:done:processing"},
		{QuarantineKey, "modules:quarantine"},
		{LockKey, "homeindex:lock"},
		{EpochKey, "homeindex:epoch"},
		{CheckKey("ocr"), "ocr:check"},
		{RunKey("ocr"), "ocr:run"},
		{QueueKey("ocr", PhaseCheck), "ocr:check"},
		{QueueKey("ocr", PhaseRun), "ocr:run"},
		{CheckProcessingKey("ocr"), "ocr:check:processing"},
		{RunProcessingKey("ocr"), "ocr:run:processing"},
		{ProcessingKey("ocr:run"), "ocr:run:processing"},
		{FailedKey("ocr"), "ocr:failed"},
		{JobsKey("ocr"), "homeindex:ocr:jobs"},
		{RetryKey("ocr"), "homeindex:ocr:retry"},
		{SuspectsKey("ocr"), "homeindex:ocr:suspects"},
		{ShareKey("gpu"), "gpu:share"},
		{ShareTTLKey("gpu"), "gpu:share:ttl"},
		{RetryMember(PhaseRun, `{"id":"a"}`), `run|{"id":"a"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestValidModuleName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"ocr": true, "vision-module": true, "a_1": true, "": false, "A": false, "a:b": false,
		"../m": false, "a/b": false, "a b": false,
		"x234567890123456789012345678901234567890123456789012345678901234":  true,
		"x2345678901234567890123456789012345678901234567890123456789012345": false,
	} {
		if got := ValidModuleName(name); got != want {
			t.Errorf("ValidModuleName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseQueueKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		module string
		phase  Phase
		ok     bool
	}{
		{"ocr:check", "ocr", PhaseCheck, true},
		{"ocr:run", "ocr", PhaseRun, true},
		{"a-b:run", "a-b", PhaseRun, true},
		{"ocr:check:processing", "", "", false},
		{":run", "", "", false},
		{"run", "", "", false},
		{"OCR:run", "", "", false},
		{"x:y:run", "", "", false},
	} {
		m, p, ok := ParseQueueKey(tc.in)
		if m != tc.module || p != tc.phase || ok != tc.ok {
			t.Errorf("ParseQueueKey(%q) = %q, %q, %v; want %q, %q, %v", tc.in, m, p, ok, tc.module, tc.phase, tc.ok)
		}
	}
}
