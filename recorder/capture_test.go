package recorder

import (
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestELFInterp: the interpreter read from the program headers alone is
// the one debug/elf finds, for the machine's programs and libraries (a
// PIE, a shared library, a static program without one) and for files
// that are not ELF or are cut short.
func TestELFInterp(t *testing.T) {
	var files []string
	for _, name := range []string{"true", "sh", "ls", "ldconfig"} {
		if p, err := exec.LookPath(name); err == nil {
			files = append(files, p)
		}
	}
	libs, _ := filepath.Glob("/lib/x86_64-linux-gnu/libc.so.*")
	files = append(files, libs...)
	if self, err := os.Executable(); err == nil {
		files = append(files, self)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v to read", files)
	}
	withInterp := 0
	for _, p := range files {
		want := debugELFInterp(t, p)
		if want != "" {
			withInterp++
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := interpreter(f); got != want {
			t.Errorf("interpreter(%s) = %q, want %q (debug/elf)", p, got, want)
		}
		f.Close()
	}
	if withInterp == 0 {
		t.Errorf("none of %v has an interpreter: the comparison proves nothing", files)
	}
	dir := t.TempDir()
	real := files[0]
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"script": []byte("#!/bin/sh -e\necho hi\n"),
		"text":   []byte("hello\n"),
		"cut":    b[:100],
		"empty":  nil,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o700); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(p)
		want := ""
		if name == "script" {
			want = "/bin/sh"
		}
		if got := interpreter(f); got != want {
			t.Errorf("interpreter(%s) = %q, want %q", name, got, want)
		}
		f.Close()
	}
}

func debugELFInterp(t *testing.T, p string) string {
	ef, err := elf.Open(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer ef.Close()
	for _, ph := range ef.Progs {
		if ph.Type == elf.PT_INTERP {
			s, _ := io.ReadAll(ph.Open())
			return strings.TrimRight(string(s), "\x00")
		}
	}
	return ""
}
