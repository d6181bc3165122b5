package debuginfo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
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
			if f == file || (!path.IsAbs(file) && (path.Base(f) == file || strings.HasSuffix(f, "/"+file))) {
				add(f)
			}
		}
	}
	add(file)
	return out
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
