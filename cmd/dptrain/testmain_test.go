package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// asBinaryEnv makes the test binary act as the dptrain command (main's
// dispatch, signal handling included), so the crash tests can start, stall
// and kill real dptrain processes without building the binary again.
const asBinaryEnv = "DPTRAIN_TEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
