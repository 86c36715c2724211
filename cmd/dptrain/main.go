// Command dptrain trains models with differentially private SGD and reports
// the privacy spent. Each subcommand lives in its own file and registers
// itself in init; this file only dispatches and maps errors to exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/dptrain/dptrain/trainer"
)

// command is one subcommand: run gets the arguments after the subcommand name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("dptrain: duplicate command " + c.name) // programmer error
	}
	commands[c.name] = c
}

// inputError marks an error caused by the user's input: exit code 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput returns an error that makes dptrain exit with status 2.
func badInput(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

// asInput marks err (if non-nil) as caused by user input.
func asInput(err error) error {
	if err == nil {
		return nil
	}
	var ie *inputError
	if errors.As(err, &ie) {
		return err
	}
	return &inputError{err}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dptrain <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'dptrain <command> -h' for the flags of a command.")
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, version())
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		if near := closest(args[0], names); near != "" {
			fmt.Fprintf(stderr, "dptrain: unknown command %q (did you mean %s?)\n", args[0], near)
			return 2
		}
		fmt.Fprintf(stderr, "dptrain: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "dptrain %s: %v\n", c.name, err)
	if errors.Is(err, trainer.ErrInterrupted) || errors.Is(err, context.Canceled) {
		return 130 // the shell's convention for SIGINT
	}
	var ie *inputError
	if errors.As(err, &ie) {
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
