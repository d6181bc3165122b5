// Package procrun runs a command with a hard timeout. The command gets its
// own process group, and the whole group is killed when the timeout expires,
// so a hung guest (or a hung tracer and its tracees) cannot stall the caller.
//
// It serves both the end-to-end tests (through testenv) and the benchmark
// harness, which has no *testing.T.
package procrun

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// waitDelay bounds how long Run waits for stdout/stderr to close after the
// process has exited or been killed (a stray grandchild may hold them open).
const waitDelay = 5 * time.Second

// Result is what a finished command showed its user.
type Result struct {
	Stdout, Stderr []byte
	// Exit is the exit status as a shell reports it: the exit code, or
	// 128+N when the process died of signal N.
	Exit     int
	Duration time.Duration
	// CPU is the CPU time (user and system) the process used, its
	// children waited for included: what calibrations of work count,
	// since on a loaded machine the wall time runs ahead of it.
	CPU time.Duration
}

// ErrTimeout is returned (wrapped) when the command outlived its timeout.
var ErrTimeout = errors.New("timed out")

// Run starts cmd in a new process group, captures stdout and stderr unless
// cmd already has writers for them, and waits at most timeout. On timeout it
// kills the process group and returns the output so far with an error
// wrapping ErrTimeout. Any error other than a non-zero exit status is
// returned as an error.
func Run(cmd *exec.Cmd, timeout time.Duration) (Result, error) {
	var stdout, stderr bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.WaitDelay = waitDelay

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{Exit: -1}, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var err, timedOut error
	select {
	case err = <-done:
	case <-timer.C:
		// Negative pid: the whole process group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		timedOut = fmt.Errorf("%s: %w after %v", cmd.Path, ErrTimeout, timeout)
	}
	res := Result{
		Stdout:   stdout.Bytes(),
		Stderr:   stderr.Bytes(),
		Exit:     exitStatus(cmd),
		Duration: time.Since(start),
	}
	if ps := cmd.ProcessState; ps != nil {
		res.CPU = ps.UserTime() + ps.SystemTime()
	}
	if timedOut != nil {
		return res, timedOut
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("wait %s: %w", cmd.Path, err)
	}
	return res, nil
}

// exitStatus converts cmd's wait status to a shell-style status.
func exitStatus(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return cmd.ProcessState.ExitCode()
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
