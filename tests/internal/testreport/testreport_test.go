package main

// The streams in testdata were recorded with go1.26 from the throwaway
// module in testdata/gen:
//
//	cd testdata/gen
//	go test -count=1 -json ./allpass ./buildfail ./mixed ./notests ./panics >../mixed.json
//	go test -count=1 -json ./allpass ./notests >../pass.json
//	go test -count=1 -json ./notests ./panics -run TestOK >../noskip.json
//	go test -count=1 -json -timeout 2s ./hang >../timeout.json

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func readStream(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runReport runs the reporter on input and returns its output and status.
func runReport(input string) (string, int) {
	var out bytes.Buffer
	code := run(strings.NewReader(input), &out)
	return out.String(), code
}

// summary returns the report's final part: from the skip list (or the
// "no skipped tests" line) to the end.
func summary(t *testing.T, out string) string {
	t.Helper()
	for _, head := range []string{"\nskipped tests:\n", "\nno skipped tests\n"} {
		if i := strings.LastIndex(out, head); i >= 0 {
			return out[i+1:]
		}
	}
	t.Fatalf("no skip list in output:\n%s", out)
	return ""
}

func check(t *testing.T, out string, code, wantCode int, wantSummary string, want, notWant []string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit status %d, want %d", code, wantCode)
	}
	if got := summary(t, out); got != wantSummary {
		t.Errorf("summary:\n%s\nwant:\n%s", got, wantSummary)
	}
	for _, s := range want {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	for _, s := range notWant {
		if strings.Contains(out, s) {
			t.Errorf("output has %q", s)
		}
	}
	if t.Failed() {
		t.Logf("full output:\n%s", out)
	}
}

func TestMixed(t *testing.T) {
	out, code := runReport(readStream(t, "mixed.json"))
	check(t, out, code, 1, `skipped tests:
  example.com/trx/allpass TestB/y: multi line reason
  example.com/trx/mixed TestSkip: needs root
  example.com/trx/mixed TestSkipNoReason: (no reason given)
  example.com/trx/mixed TestSkipf: tool "gdb" not in PATH
  example.com/trx/mixed TestSubs/skipped: only on arm64
  example.com/trx/mixed TestSubs/nested/deep: deep skip
  example.com/trx/mixed TestParallel/b: parallel skip
failed packages: example.com/trx/buildfail example.com/trx/mixed example.com/trx/panics
9 passed, 4 failed, 7 skipped
`, []string{
		// Build output, then each package's result line.
		"# example.com/trx/buildfail [example.com/trx/buildfail.test]\nbuildfail/buildfail_test.go:5:",
		"ok  \texample.com/trx/allpass\t0.003s\n",
		"FAIL\texample.com/trx/buildfail [build failed]\n",
		"FAIL\texample.com/trx/mixed\t0.006s\n",
		"?   \texample.com/trx/notests\t[no test files]\n",
		"FAIL\texample.com/trx/panics\t0.009s\n",
		// A failed test in full.
		"    mixed_test.go:8: about to fail\n    mixed_test.go:9: got 1, want 2\n--- FAIL: TestFail (0.00s)\n",
		// A failed subtest, shown with its parent and siblings.
		"=== RUN   TestSubs/bad\n    mixed_test.go:22: subtest detail\n    mixed_test.go:23: subtest broke\n--- FAIL: TestSubs/bad (0.00s)\n",
		"--- FAIL: TestSubs (0.00s)\n",
		"panic: assignment to entry in nil map",
	}, []string{
		"just a log line", // TestPass passed: its output is not shown
		"=== RUN   TestParallel",
		"=== RUN   TestOK",
	})
	if n := strings.Count(out, "subtest broke"); n != 1 {
		t.Errorf("failed subtest's output shown %d times, want once", n)
	}
}

func TestPass(t *testing.T) {
	out, code := runReport(readStream(t, "pass.json"))
	check(t, out, code, 0, `skipped tests:
  example.com/trx/allpass TestB/y: multi line reason
3 passed, 0 failed, 1 skipped
`, []string{
		"?   \texample.com/trx/notests\t[no test files]\nok  \texample.com/trx/allpass\t0.004s\n\nskipped tests:",
	}, []string{"testmain: stderr note", "=== RUN", "PASS\n", "failed packages"})
}

func TestNoSkip(t *testing.T) {
	out, code := runReport(readStream(t, "noskip.json"))
	check(t, out, code, 0, "no skipped tests\n1 passed, 0 failed, 0 skipped\n",
		[]string{"ok  \texample.com/trx/panics\t"}, nil)
}

// A test killed by -timeout never reports a result: it counts as failed
// and its output is shown with its package's.
func TestTimeout(t *testing.T) {
	out, code := runReport(readStream(t, "timeout.json"))
	check(t, out, code, 1, `skipped tests:
  example.com/trx/hang TestQuick: not today
failed packages: example.com/trx/hang
0 passed, 1 failed, 1 skipped
`, []string{
		"=== RUN   TestHang\n    hang_test.go:11: waiting forever\npanic: test timed out after 2s\n",
		"FAIL\texample.com/trx/hang\t2.010s\n",
	}, nil)
}

// Input that stops before a started package's result fails the run, and
// what was buffered for that package is shown.
func TestTruncated(t *testing.T) {
	in := readStream(t, "pass.json")
	in = in[:strings.Index(in, `"Test":"TestB/y"`)]
	in = in[:strings.LastIndex(in, "\n")+1]
	out, code := runReport(in)
	check(t, out, code, 1, `no skipped tests
testreport: input ended before the result of example.com/trx/allpass
failed packages: example.com/trx/allpass
2 passed, 1 failed, 0 skipped
`, []string{"=== RUN   TestB\n=== RUN   TestB/x\n--- PASS: TestB/x (0.00s)\n"}, nil)
}

func TestEmpty(t *testing.T) {
	out, code := runReport("")
	check(t, out, code, 1, "no skipped tests\ntestreport: no test events on input\n0 passed, 0 failed, 0 skipped\n", nil, nil)
}

// Lines that are not test2json events pass through verbatim, a last line
// without its newline included.
func TestNonJSON(t *testing.T) {
	in := "go: downloading example.com/x v1.0.0\n{not json\n" + readStream(t, "noskip.json") + "trailing words"
	out, code := runReport(in)
	check(t, out, code, 0, "no skipped tests\n1 passed, 0 failed, 0 skipped\n",
		[]string{"go: downloading example.com/x v1.0.0\n{not json\n?   \texample.com/trx/notests", "trailing words\n"}, nil)
}

func TestSkipReason(t *testing.T) {
	g := []line{
		{"TestA", "=== RUN   TestA\n"},
		{"TestA/sub", "    a_test.go:3: not mine\n"},
		{"TestA", "=== NAME  TestA\n"},
		{"TestA", "    a_test.go:7: first\n"},
		{"TestA", "    a_test.go:8: second\n"},
		{"TestA", "        continued\n"},
		{"TestA", "--- SKIP: TestA (0.00s)\n"},
	}
	if got, want := skipReason(g, "TestA"), "first; second continued"; got != want {
		t.Errorf("skipReason = %q, want %q", got, want)
	}
	if got, want := skipReason(g[:1], "TestA"), "(no reason given)"; got != want {
		t.Errorf("skipReason = %q, want %q", got, want)
	}
}
