package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/hermitdbg/hermit/detcore"
)

// capturedRun is the observable outcome of one run under --verify.
type capturedRun struct {
	stdout, stderr []byte
	res            detcore.Result
}

// verify runs the program twice with the same input and compares what a
// user could observe. It passes the first run's output through.
func verify(path string, argv []string, f *runFlags) int {
	input, err := snapshotStdin()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit: --verify: %v\n", err)
		return exitHermit
	}
	defer os.Remove(input)
	var runs [2]capturedRun
	for i := range runs {
		r, err := captureRun(path, argv, f, input)
		if err != nil {
			return reportLaunchError(err)
		}
		runs[i] = r
	}
	os.Stdout.Write(runs[0].stdout)
	os.Stderr.Write(runs[0].stderr)
	if f.summary {
		printSummary(os.Stderr, runs[0].res, f)
	}
	if d := firstDifference(runs[0], runs[1]); d != "" {
		fmt.Fprintf(os.Stderr, "hermit: --verify: the two runs differ: %s\n", d)
		return exitHermit
	}
	return runs[0].res.ExitCode
}

// snapshotStdin copies hermit's stdin (unless it is a terminal) into a
// temporary file that both runs read.
func snapshotStdin() (string, error) {
	tmp, err := os.CreateTemp("", "hermit-verify-stdin-*")
	if err != nil {
		return "", err
	}
	defer tmp.Close()
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
		if _, err := io.Copy(tmp, os.Stdin); err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
	}
	return tmp.Name(), nil
}

func captureRun(path string, argv []string, f *runFlags, input string) (capturedRun, error) {
	in, err := os.Open(input)
	if err != nil {
		return capturedRun{}, err
	}
	defer in.Close()
	out, err := os.CreateTemp("", "hermit-verify-out-*")
	if err != nil {
		return capturedRun{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	errf, err := os.CreateTemp("", "hermit-verify-err-*")
	if err != nil {
		return capturedRun{}, err
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	res, err := runGuest(path, argv, f, guestIO{in, out, errf}, nil)
	if err != nil {
		return capturedRun{}, err
	}
	r := capturedRun{res: res}
	if r.stdout, err = os.ReadFile(out.Name()); err != nil {
		return r, err
	}
	r.stderr, err = os.ReadFile(errf.Name())
	return r, err
}

// firstDifference describes the first observable difference between two
// runs, or returns "" if there is none.
func firstDifference(a, b capturedRun) string {
	if d := diffBytes("stdout", a.stdout, b.stdout); d != "" {
		return d
	}
	if d := diffBytes("stderr", a.stderr, b.stderr); d != "" {
		return d
	}
	if a.res.ExitCode != b.res.ExitCode {
		return fmt.Sprintf("exit status %d, then %d", a.res.ExitCode, b.res.ExitCode)
	}
	if a.res.Stats.Digest != b.res.Stats.Digest {
		return fmt.Sprintf("schedule digest %016x, then %016x (same output, different interleaving)", a.res.Stats.Digest, b.res.Stats.Digest)
	}
	return ""
}

func diffBytes(name string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	line := bytes.Count(a[:i], []byte("\n")) + 1
	return fmt.Sprintf("%s differs at byte %d (line %d): run 1 has %s, run 2 has %s",
		name, i, line, excerpt(a, i), excerpt(b, i))
}

// excerpt quotes the rest of the line at offset i.
func excerpt(b []byte, i int) string {
	if i >= len(b) {
		return "end of output"
	}
	end := i + 40
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 && i+j < end {
		end = i + j
	}
	if end > len(b) {
		end = len(b)
	}
	return strconv.Quote(string(b[i:end]))
}
