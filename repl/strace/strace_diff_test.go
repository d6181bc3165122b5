package strace

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// TestAgainstStrace runs the real strace on /bin/cat, rebuilds the calls
// it printed (arguments parsed back, strings put in a fake memory image)
// and wants the same lines from Format. It skips when strace or cat is
// missing or cannot trace.
func TestAgainstStrace(t *testing.T) {
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace")
	}
	if _, err := os.Stat("/bin/cat"); err != nil {
		t.Skip("no /bin/cat")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	content := "a\x01b\x017\xff\t\"q\"\\ \x00\x00x\nand a tail long enough to be cut off\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "strace.out")
	cmd := exec.Command(straceBin, "-f", "-e", "trace=openat,read,write,close", "-s", "32", "-o", out,
		"/bin/cat", file, filepath.Join(dir, "missing"))
	if b, err := cmd.CombinedOutput(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok || !strings.Contains(string(b), "missing") {
			t.Skipf("strace cannot run here: %v: %s", err, b)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`^(?:\d+ +)?(openat|read|write|close)\((.*)\) +=\s+(.*)$`)
	checked := 0
	sawFile, sawMissing := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		mm := line.FindStringSubmatch(sc.Text())
		if mm == nil {
			continue
		}
		want := mm[1] + "(" + mm[2] + ") = " + mm[3]
		c, mem, ok := rebuild(t, mm[1], splitArgs(mm[2]), mm[3])
		if !ok {
			t.Errorf("cannot rebuild %q", sc.Text())
			continue
		}
		if got := Format(c, mem.mem, Options{Out: true}); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		checked++
		sawFile = sawFile || strings.Contains(want, `"a\1b\0017\377\t\"q\"\\ \0\0x\nand a tail long "...`)
		sawMissing = sawMissing || strings.Contains(want, "missing") && strings.Contains(want, "ENOENT")
	}
	if checked < 5 || !sawFile || !sawMissing {
		t.Errorf("checked %d lines (file read %v, missing file %v)", checked, sawFile, sawMissing)
	}
	t.Logf("%d lines match strace", checked)
}

// splitArgs splits strace's argument list at top-level commas.
func splitArgs(s string) []string {
	var args []string
	inStr, esc, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case esc:
			esc = false
		case c == '\\' && inStr:
			esc = true
		case c == '"':
			inStr = !inStr
		case c == ',' && !inStr:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(args, strings.TrimSpace(s[start:]))
}

// unquote decodes strace's C string (with a trailing ... when cut).
func unquote(s string) (b []byte, cut, ok bool) {
	cut = strings.HasSuffix(s, `"...`)
	s = strings.TrimSuffix(s, "...")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false, false
	}
	s = s[1 : len(s)-1]
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		if i >= len(s) {
			return nil, false, false
		}
		switch c := s[i]; c {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'v':
			b = append(b, '\v')
		case 'f':
			b = append(b, '\f')
		case 'x':
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, false, false
			}
			b = append(b, byte(v))
			i += 2
		default:
			if c < '0' || c > '7' {
				b = append(b, c)
				continue
			}
			v, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				v = v*8 + int(s[j]-'0')
			}
			b = append(b, byte(v))
			i = j - 1
		}
	}
	return b, cut, true
}

// rebuild makes the Call strace printed.
func rebuild(t *testing.T, name string, args []string, res string) (Call, *image, bool) {
	m := newImage()
	var c Call
	c.Done = true
	nr, _ := SyscallNumber(name)
	c.Nr = nr
	// The result: "3", or "-1 ENOENT (...)".
	if f := strings.Fields(res); len(f) >= 2 && f[0] == "-1" {
		for n := range errnos {
			if errnos[n].name == f[1] {
				c.Result = int64(-n)
			}
		}
		if c.Result == 0 {
			return c, nil, false
		}
	} else {
		r, err := strconv.ParseInt(res, 10, 64)
		if err != nil {
			return c, nil, false
		}
		c.Result = r
	}
	num := func(s string) uint64 {
		if s == "AT_FDCWD" {
			return uint64(1<<32 - 100)
		}
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			t.Errorf("bad number %q", s)
		}
		return uint64(v)
	}
	switch nr {
	case abi.SYS_CLOSE:
		if len(args) != 1 {
			return c, nil, false
		}
		c.Args[0] = num(args[0])
	case abi.SYS_OPENAT:
		if len(args) < 3 {
			return c, nil, false
		}
		c.Args[0] = num(args[0])
		p, _, ok := unquote(args[1])
		if !ok {
			return c, nil, false
		}
		c.Args[1] = m.put(append(p, 0))
		fl, ok := parseOpenFlags(args[2])
		if !ok {
			return c, nil, false
		}
		c.Args[2] = fl
		if len(args) == 4 {
			v, err := strconv.ParseUint(args[3], 8, 32)
			if err != nil {
				return c, nil, false
			}
			c.Args[3] = v
		}
	case abi.SYS_READ, abi.SYS_WRITE:
		if len(args) != 3 {
			return c, nil, false
		}
		c.Args[0] = num(args[0])
		c.Args[2] = num(args[2])
		b, _, ok := unquote(args[1])
		if !ok {
			return c, nil, false
		}
		// The rest of the buffer, which strace did not show, is filler.
		full := make([]byte, c.Args[2])
		copy(full, b)
		c.Args[1] = m.put(full)
	default:
		return c, nil, false
	}
	return c, m, true
}

func parseOpenFlags(s string) (uint64, bool) {
	var v uint64
	for _, part := range strings.Split(s, "|") {
		found := false
		for mode, n := range accModes {
			if n == part {
				v |= uint64(mode)
				found = true
			}
		}
		for _, fl := range openFlags {
			if fl.name == part {
				v |= fl.v
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return v, true
}
