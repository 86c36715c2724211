package main

import (
	"os"
	"testing"
)

// asBinaryEnv makes the test binary act as the dptrain command (mainCode:
// main's dispatch, signal handling included), so the crash tests can start,
// stall and kill real dptrain processes without building the binary again.
const asBinaryEnv = "DPTRAIN_TEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
