package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalHelperProcess is not a test of its own: with
// DPTRAIN_SIGNAL_ARGS set, it is the dptrain binary (mainCode, the same
// signal wiring as main) for TestLongComputationsHonourSIGTERM.
func TestSignalHelperProcess(t *testing.T) {
	args := os.Getenv("DPTRAIN_SIGNAL_ARGS")
	if args == "" {
		t.Skip("the helper process of TestLongComputationsHonourSIGTERM")
	}
	os.Exit(mainCode(strings.Fields(args), os.Stdout, os.Stderr))
}

// Every long computation reached from the CLI ends on SIGTERM with exit
// 130. Before, audit bound, privacy and calibrate with the PLD accountant
// and report ran to the end (seconds to minutes at full CPU), ignoring the
// signal. The process gets the signal 300 ms after it starts, while each of
// these is still computing (each runs for several seconds undisturbed);
// it must be gone within 10 s, a bound generous enough for a loaded
// machine; it is not a timing assertion (an interrupted run exits within
// a moment).
func TestLongComputationsHonourSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	for _, args := range []string{
		"audit bound --canaries 1e15 --guesses 1e15 --correct 1e15 --delta 1e-5",
		"privacy --q 0.01 --sigma 1 --steps 1e7 --delta 1e-5 --accountant pld",
		"calibrate --epsilon 1 --delta 1e-5 --q 0.01 --steps 1e7 --accountant pld",
		"report --synthetic --n 20000 --d 400 --seed 1",
		"sweep --model logreg --grid lr=1,2,4 --out " + out + "/sweep",
	} {
		t.Run(strings.Fields(args)[0], func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalHelperProcess$")
			cmd.Env = append(os.Environ(), "DPTRAIN_SIGNAL_ARGS="+args)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			time.Sleep(300 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatalf("%s: finished before the signal: %v", args, err)
			}
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 130 {
					t.Errorf("%s: SIGTERM gave %v, want exit 130; stderr %q", args, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Errorf("%s: still running 10 s after SIGTERM", args)
			}
		})
	}
}
