package debuginfo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// SourceLine is one line of a source file.
type SourceLine struct {
	Line int // 1-based
	Text string
}

// maxSourceBytes caps the size of a source file we read.
const maxSourceBytes = 16 << 20

// SourceLines returns lines line-around … line+around of a source file,
// clipped to the file. file may be a path as Location.File gives it or a
// base name ("main.c") that a line table of a module names. Each candidate
// path (the line table's, which is the DWARF comp dir joined with the file
// name) is tried through open (the recording's files), then on the host.
// The error names the file when no candidate can be read and says how many
// lines the file has when line is past its end.
func (s *Space) SourceLines(file string, line, around int, open Opener) ([]SourceLine, error) {
	if around < 0 {
		around = 0
	}
	var lastErr error
	for _, p := range s.sourceCandidates(file) {
		text, err := readSource(p, open)
		if err != nil {
			lastErr = err
			continue
		}
		return sliceLines(text, p, line, around)
	}
	if lastErr == nil {
		lastErr = os.ErrNotExist
	}
	return nil, fmt.Errorf("source file %s: %w", file, lastErr)
}

// sourceCandidates lists the paths that may hold file, line-table names first.
func (s *Space) sourceCandidates(file string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, m := range s.modules() {
		m.init()
		for _, f := range m.files {
			if sameFile(f, file) {
				add(f)
			}
		}
	}
	add(file)
	return out
}

// sameFile reports whether f, a file name of a line table, is the file a
// user named name: the same path, or, for a relative name, its base name
// or a suffix of it after a slash.
func sameFile(f, name string) bool {
	return f == name || (!path.IsAbs(name) && (path.Base(f) == name || strings.HasSuffix(f, "/"+name)))
}

// LineAddr is where a breakpoint at a source line goes in one function.
type LineAddr struct {
	Addr uint64 // run-time address
	File string // the line table's name of the file
	Line int    // the line: the one asked for, or the next with code
}

// LineAddrs finds where gdb's break FILE:LINE would stop: in each
// function with code for that line of file (named as SourceLines takes
// it), the lowest address the line table marks as a statement of it; past
// the prologue when that is the function's entry. A line without code
// (a comment, a blank line) moves to the next one of the file that has
// some, as in gdb.
func (s *Space) LineAddrs(file string, line int) ([]LineAddr, error) {
	known, best := false, 0
	for _, m := range s.modules() {
		m.init()
		for _, r := range m.rows {
			if r.endSeq || !r.stmt || !sameFile(r.file, file) {
				continue
			}
			known = true
			if r.line >= line && (best == 0 || r.line < best) {
				best = r.line
			}
		}
	}
	switch {
	case !known:
		return nil, fmt.Errorf("no source file named %s in the line tables of the program or its loaded libraries", file)
	case best == 0:
		return nil, fmt.Errorf("%s has no code at line %d or after it", file, line)
	}
	var out []LineAddr
	for _, m := range s.modules() {
		lowest := map[uint64]int{} // function start (or the address, outside one) -> index in out
		for _, r := range m.rows {
			if r.endSeq || !r.stmt || r.line != best || !sameFile(r.file, file) {
				continue
			}
			key := r.addr
			if _, start, ok := m.funcAt(r.addr); ok {
				key = start
			}
			a := LineAddr{Addr: r.addr + m.bias, File: r.file, Line: best}
			if i, ok := lowest[key]; !ok {
				lowest[key] = len(out)
				out = append(out, a)
			} else if a.Addr < out[i].Addr {
				out[i] = a
			}
		}
		for key, i := range lowest {
			if out[i].Addr == key+m.bias {
				// The function's entry: its first line after the
				// prologue, as break FUNC.
				out[i].Addr = s.AfterPrologue(out[i].Addr)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

// readSource reads a file through open, then from the host.
func readSource(p string, open Opener) (string, error) {
	var openErr error
	if open != nil {
		r, size, err := open(p)
		if err == nil {
			if size > maxSourceBytes {
				size = maxSourceBytes
			}
			b := make([]byte, size)
			n, err := r.ReadAt(b, 0)
			if err == nil || (errors.Is(err, io.EOF) && int64(n) == size) {
				return string(b[:n]), nil
			}
			openErr = err
		} else {
			openErr = err
		}
	}
	f, err := os.Open(p)
	if err != nil {
		if openErr != nil {
			return "", openErr
		}
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSourceBytes))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// sliceLines cuts lines line-around … line+around out of text.
func sliceLines(text, name string, line, around int) ([]SourceLine, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if line < 1 || line > len(lines) {
		return nil, fmt.Errorf("line number %d out of range; %q has %d lines", line, name, len(lines))
	}
	lo, hi := max(1, line-around), min(len(lines), line+around)
	out := make([]SourceLine, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		out = append(out, SourceLine{Line: i, Text: strings.TrimSuffix(lines[i-1], "\r")})
	}
	return out, nil
}
