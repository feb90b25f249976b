package rssprobe

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

const (
	probeEnv   = "RSSPROBE_TEST_CHILD"
	commandEnv = "RSSPROBE_TEST_COMMAND"
	holdEnv    = "RSSPROBE_TEST_HOLD"
)

func TestMain(m *testing.M) {
	ServeCommand(commandEnv)
	if os.Getenv(holdEnv) != "" { // the command CommandPeakKB measures: hold 64 MiB, say so
		hold64MiB()
		fmt.Println("held")
		os.Exit(0)
	}
	Serve(probeEnv, func(files []string) error {
		hold64MiB()
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

// hold64MiB touches 64 MiB so the process's peak shows it.
func hold64MiB() {
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	_ = b[len(b)-1]
}

// CommandPeakKB reports the command's own peak (at least the 64 MiB it held; more under -race,
// whose shadow memory counts) and its output, though this test process holds 512 MiB: a measure
// seeded with the parent's peak would report at least that.
func TestCommandPeakKB(t *testing.T) {
	big := make([]byte, 512<<20)
	for i := 0; i < len(big); i += 4096 { // one write per page makes it resident
		big[i] = 1
	}
	self, err := exec.LookPath(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(holdEnv, "1")
	out, kb := CommandPeakKB(t, commandEnv, self)
	if string(out) != "held\n" {
		t.Errorf("output %q", out)
	}
	if kb < 64<<10 || kb >= 512<<10 {
		t.Errorf("command peak %d kB, want its own 64 MiB and not this test's 512 MiB", kb)
	}
	_ = big[len(big)-1]
}
