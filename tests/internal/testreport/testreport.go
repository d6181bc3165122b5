// Command testreport reads the events of `go test -json` on stdin and writes
// a log close to plain `go test` output: a result line per package and the
// full output of every failed test, with build output and any non-JSON input
// line passed through verbatim. It ends with every skipped test and its
// reason, then one line of counts.
//
// It exits 1 if a test, a build or a package failed, if a package started
// but never reported a result, or if the input held no test events.
//
//	go test -json ./... | go run ./tests/internal/testreport
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// event is one test2json record (see `go doc test2json`).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string
}

// line is one Output line of a test, tagged with the (sub)test it belongs to.
type line struct{ test, text string }

// pkgState is what is buffered for a package until its result arrives.
type pkgState struct {
	out     []string          // package-level Output lines
	groups  map[string][]line // by top-level test: its and its subtests' lines
	order   []string          // top-level tests in order of first sight
	running map[string]bool   // (sub)tests that started: true until a result
}

// skip is one skipped test in the final list.
type skip struct{ pkg, test, reason string }

// report accumulates the state of one run.
type report struct {
	w       io.Writer
	pkgs    map[string]*pkgState
	pkgSeen []string // packages in order of first event
	done    map[string]bool
	skips   []skip
	badPkgs []string
	events  int
	// Counts of tests: every test and every subtest that reported a result
	// counts once, so a parent with subtests counts as well as each of its
	// subtests. A test that started but had no result when its package
	// ended (a timeout, a crash) counts as failed.
	passed, failed, skipped int
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

// run reads test2json events from r, writes the log and the report to w and
// returns the exit status.
func run(r io.Reader, w io.Writer) int {
	rep := &report{w: w, pkgs: map[string]*pkgState{}, done: map[string]bool{}}
	br := bufio.NewReader(r)
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			rep.handle(b)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(w, "testreport: reading input: %v\n", err)
			return 1
		}
	}
	return rep.finish()
}

// handle processes one input line: a JSON event or a line to pass through.
func (r *report) handle(b []byte) {
	var e event
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &e) != nil || e.Action == "" {
		r.w.Write(b)
		if b[len(b)-1] != '\n' {
			io.WriteString(r.w, "\n")
		}
		return
	}
	r.events++
	switch e.Action {
	case "build-output":
		io.WriteString(r.w, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.out = append(p.out, e.Output)
		case "pass", "skip", "fail":
			r.endPackage(e.Package, e.Action == "fail", e.Elapsed)
		}
		return
	}
	top, _, _ := strings.Cut(e.Test, "/")
	if _, ok := p.groups[top]; !ok {
		p.groups[top] = nil
		p.order = append(p.order, top)
	}
	switch e.Action {
	case "run":
		p.running[e.Test] = true
	case "output":
		p.groups[top] = append(p.groups[top], line{e.Test, e.Output})
	case "pass", "fail", "skip":
		delete(p.running, e.Test)
		switch e.Action {
		case "pass":
			r.passed++
		case "fail":
			r.failed++
		case "skip":
			r.skipped++
			r.skips = append(r.skips, skip{e.Package, e.Test, skipReason(p.groups[top], e.Test)})
		}
		if e.Test != top {
			return // a failed subtest is shown with its top-level test
		}
		if e.Action == "fail" {
			r.writeGroup(p.groups[top])
		}
		delete(p.groups, top)
	}
}

// pkg returns the state of package name, creating it on first sight.
func (r *report) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{groups: map[string][]line{}, running: map[string]bool{}}
		r.pkgs[name] = p
		r.pkgSeen = append(r.pkgSeen, name)
	}
	return p
}

// endPackage writes the result of package name and drops its state. A
// passing package shows only its result line; a failing one shows the
// output of its unfinished tests and all its package-level output.
func (r *report) endPackage(name string, failed bool, elapsed float64) {
	p := r.pkgs[name]
	r.done[name] = true
	delete(r.pkgs, name)
	r.failed += len(p.running)
	if failed || len(p.running) > 0 {
		r.badPkgs = append(r.badPkgs, name)
		for _, top := range p.order {
			if g, ok := p.groups[top]; ok && len(g) > 0 {
				r.writeGroup(g)
			}
		}
		for _, s := range p.out {
			io.WriteString(r.w, s)
		}
		if !failed { // a result line saying ok would be misleading
			fmt.Fprintf(r.w, "FAIL\t%s: tests without a result\n", name)
		}
		return
	}
	for _, s := range p.out {
		if strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "?   \t") {
			io.WriteString(r.w, s)
			return
		}
	}
	fmt.Fprintf(r.w, "ok  \t%s\t%.3fs\n", name, elapsed)
}

// writeGroup writes the Output lines of a test and its subtests.
func (r *report) writeGroup(g []line) {
	for _, l := range g {
		io.WriteString(r.w, l.text)
	}
}

// finish handles packages that never reported a result, writes the skip
// list and the counts, and returns the exit status.
func (r *report) finish() int {
	var unfinished []string
	for _, name := range r.pkgSeen {
		if !r.done[name] {
			unfinished = append(unfinished, name)
			r.endPackage(name, true, 0)
		}
	}
	fmt.Fprintln(r.w)
	if len(r.skips) == 0 {
		fmt.Fprintln(r.w, "no skipped tests")
	} else {
		fmt.Fprintln(r.w, "skipped tests:")
		for _, s := range r.skips {
			fmt.Fprintf(r.w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
		}
	}
	status := 0
	if r.events == 0 {
		fmt.Fprintln(r.w, "testreport: no test events on input")
		status = 1
	}
	for _, name := range unfinished {
		fmt.Fprintf(r.w, "testreport: input ended before the result of %s\n", name)
	}
	if len(r.badPkgs) > 0 {
		fmt.Fprintf(r.w, "failed packages: %s\n", strings.Join(r.badPkgs, " "))
		status = 1
	}
	if r.failed > 0 {
		status = 1
	}
	fmt.Fprintf(r.w, "%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped)
	return status
}

// location matches the "file.go:12: " prefix testing puts before a message.
var location = regexp.MustCompile(`^[^\s:]+\.go:\d+: `)

// skipReason returns the message of skipped test name: its Output lines
// other than the === and --- status lines, trimmed of indentation and of
// the file:line prefix. Messages (lines with such a prefix) are joined with
// "; ", the continuation lines of a multi-line message with " ".
func skipReason(g []line, name string) string {
	var b strings.Builder
	for _, l := range g {
		if l.test != name {
			continue
		}
		s := strings.TrimSpace(l.text)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- ") {
			continue
		}
		msg := location.ReplaceAllString(s, "")
		switch {
		case b.Len() == 0:
		case msg != s:
			b.WriteString("; ")
		default:
			b.WriteString(" ")
		}
		b.WriteString(msg)
	}
	if b.Len() == 0 {
		return "(no reason given)"
	}
	return b.String()
}
