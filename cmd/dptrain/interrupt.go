package main

import (
	"context"
	"io"
	"sync"
)

// interruptible wraps a command that only computes and prints (privacy,
// calibrate): it returns ctx's error as soon as ctx is done, so SIGINT or
// SIGTERM ends the process within a moment even while an accountant's
// numerical loop, which takes no context, is still running. The abandoned
// computation ends with the process; it writes no file, and its output is
// cut off at the interrupt.
func interruptible(f func(ctx context.Context, args []string, stdout, stderr io.Writer) error) func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		g := &gate{}
		out, errw := g.writer(stdout), g.writer(stderr)
		done := make(chan error, 1)
		go func() { done <- f(ctx, args, out, errw) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			g.close()
			return ctx.Err()
		}
	}
}

// untilDone returns f's result, or ctx's error as soon as ctx is done (f
// keeps running until the process ends; it must write nothing).
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// gate passes writes through until it is closed, then drops them, so an
// abandoned computation cannot print after its command returned.
type gate struct {
	mu     sync.Mutex
	closed bool
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *gate) writer(w io.Writer) io.Writer { return gatedWriter{g, w} }

type gatedWriter struct {
	g *gate
	w io.Writer
}

func (gw gatedWriter) Write(p []byte) (int, error) {
	gw.g.mu.Lock()
	defer gw.g.mu.Unlock()
	if gw.g.closed {
		return len(p), nil
	}
	return gw.w.Write(p)
}
