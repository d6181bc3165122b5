package trace_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// crashWriterEnv switches the test binary into the writer process of
// TestSIGKILLWriter.
const crashWriterEnv = "HERMIT_TRACE_TEST_CRASH_WRITER"

const crashBlock = 1000

// TestMain runs the writer process when re-executed by TestSIGKILLWriter.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashWriterEnv); dir != "" {
		crashWriter(dir)
		return
	}
	os.Exit(m.Run())
}

// crashWriter appends events of stream 11 until killed, printing the number of
// events in the file after each block it completes. Its parent kills it.
func crashWriter(dir string) {
	w, err := trace.CreateOptions(dir, testHeader(), trace.Options{BlockEvents: crashBlock, FlushInterval: -1})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s := tracetest.NewStream(11, true)
	var ev trace.Event
	for i := 1; ; i++ {
		s.Next(&ev)
		if err := w.Append(&ev); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if i%crashBlock == 0 {
			fmt.Println(i)
		}
		if i == 10_000_000 { // the parent is gone; do not fill the disk
			os.Exit(2)
		}
	}
}

func TestSIGKILLWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashWriterEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Let the writer complete 20 blocks, then kill it while it appends.
	sc := bufio.NewScanner(out)
	flushed := 0
	for sc.Scan() && flushed < 20*crashBlock {
		line := sc.Text()
		n, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("writer said %q", line)
		}
		flushed = n
	}
	if flushed < 20*crashBlock {
		t.Fatalf("writer stopped after %d events: %v", flushed, sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, want killed by SIGKILL", err)
	}

	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := checkStream(t, r, 11, 0)
	var te *trace.TruncatedError
	if !errors.As(err, &te) || te.Event != n {
		t.Fatalf("read %d events, then %v; want a truncation at event %d", n, err, n)
	}
	if n < uint64(flushed) || n%crashBlock != 0 {
		t.Errorf("read %d events; want a multiple of %d, at least the %d reported flushed", n, crashBlock, flushed)
	}
	if !strings.HasPrefix(err.Error(), "truncated at event ") {
		t.Errorf("error %q", err)
	}
	t.Logf("killed after %d events reported flushed; %d readable, %v", flushed, n, err)
}

// TestReadWhileWriting checks that a reader sees the flushed prefix of a
// trace that is still being written.
func TestReadWhileWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.CreateOptions(dir, testHeader(), trace.Options{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := tracetest.NewStream(11, true)
	var ev trace.Event
	for range 1234 {
		s.Next(&ev)
		w.Append(&ev)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := checkStream(t, r, 11, 0)
	var te *trace.TruncatedError
	if n != 1234 || !errors.As(err, &te) || te.Event != 1234 || te.Block != 1 {
		t.Errorf("read %d events, then %v; want 1234, then truncated at event 1234 (block 1)", n, err)
	}
}
