package rssprobe

import (
	"os"
	"testing"
)

const probeEnv = "RSSPROBE_TEST_CHILD"

func TestMain(m *testing.M) {
	Serve(probeEnv, func(files []string) error {
		// Hold about 64 MiB, touched, so the child's peak shows it.
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = byte(i)
		}
		_ = b[len(b)-1]
		return nil
	})
	os.Exit(m.Run())
}

func TestPeakKB(t *testing.T) {
	own, err := VmHWM()
	if err != nil || own <= 0 {
		t.Fatalf("VmHWM = %d, %v", own, err)
	}
	if kb := PeakKB(t, probeEnv, []string{"x"}); kb < 64<<10 {
		t.Errorf("child peak %d kB, want at least the 64 MiB it held", kb)
	}
}
