package debuginfo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixtureDir holds the fixtures built at test time; TestMain removes it.
var fixtureDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "debuginfo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cVariants are the ways the C fixture is compiled.
var cVariants = map[string][]string{
	"O0-pie":   {"-g", "-O0", "-fPIE", "-pie"},
	"O2-pie":   {"-g", "-O2", "-fPIE", "-pie"},
	"O0-nopie": {"-g", "-O0", "-fno-pie", "-no-pie"},
	"O2-nopie": {"-g", "-O2", "-fno-pie", "-no-pie"},
	"static":   {"-g", "-O2", "-static"},
	// No .eh_frame for our functions: with -g gcc puts their CFI in .debug_frame.
	"debugframe": {"-g", "-O2", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"},
	// No CFI nor DWARF for our functions: unwinding them needs the frame pointers.
	"nocfi": {"-O0", "-fno-omit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"},
}

type built struct {
	path string
	err  error
	skip string
}

var (
	buildMu sync.Mutex
	builds  = map[string]*built{}
)

// skipf routes every skip through one place with its reason.
func skipf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Skipf("skip: "+format, args...)
}

// cFixture compiles testdata/prog.c as variant and returns the binary's path.
func cFixture(t *testing.T, variant string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	b, ok := builds[variant]
	if !ok {
		b = &built{}
		builds[variant] = b
		cc, err := exec.LookPath("cc")
		if err != nil {
			b.skip = "no C compiler (cc) in PATH"
		} else {
			src, _ := filepath.Abs("testdata/prog.c")
			b.path = filepath.Join(fixtureDir, "prog-"+variant)
			args := append(append([]string{}, cVariants[variant]...), "-o", b.path, src)
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				if variant == "static" {
					b.skip = fmt.Sprintf("cc -static does not work here: %v: %s", err, out)
				} else {
					b.err = fmt.Errorf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
		}
	}
	if b.skip != "" {
		skipf(t, "%s", b.skip)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// goFixture builds testdata/goprog and returns the binary's path.
func goFixture(t *testing.T) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	b, ok := builds["go"]
	if !ok {
		b = &built{}
		builds["go"] = b
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.skip = "no go tool in PATH"
		} else {
			dir := filepath.Join(fixtureDir, "goprog")
			b.path = filepath.Join(dir, "goprog")
			b.err = copyGoFixture(dir)
			if b.err == nil {
				cmd := exec.Command(goTool, "build", "-o", b.path, ".")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.err = fmt.Errorf("go build: %v\n%s", err, out)
				}
			}
		}
	}
	if b.skip != "" {
		skipf(t, "%s", b.skip)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func copyGoFixture(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"main.go", "regs_amd64.s"} {
		b, err := os.ReadFile(filepath.Join("testdata/goprog", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module goprog\n\ngo 1.26\n"), 0o644)
}

// hostOpen is an Opener over the host's files.
func hostOpen(path string) (io.ReaderAt, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// region is a copy of process memory.
type region struct {
	addr uint64
	b    []byte
}

// regionsMem serves reads from copies of memory, failing elsewhere.
func regionsMem(rs ...region) Mem {
	return func(addr uint64, b []byte) (int, error) {
		n := 0
		for n < len(b) {
			a := addr + uint64(n)
			found := false
			for _, r := range rs {
				if a >= r.addr && a < r.addr+uint64(len(r.b)) {
					n += copy(b[n:], r.b[a-r.addr:])
					found = true
					break
				}
			}
			if !found {
				return n, fmt.Errorf("unmapped %#x", a)
			}
		}
		return n, nil
	}
}

// fileMem serves reads from the files mapped in s (initial data only).
func fileMem(s *Space) Mem {
	return func(addr uint64, b []byte) (int, error) {
		got := s.fileBytes(addr, len(b))
		n := copy(b, got)
		if n < len(b) {
			return n, fmt.Errorf("unmapped %#x", addr+uint64(n))
		}
		return n, nil
	}
}

// cDump is what prog.c's dump wrote.
type cDump struct {
	regs  Regs
	stack region
	maps  string
}

// dumpSpace builds the C fixture variant, runs it in mode, and returns
// the fixture, its dump and the address space the dump's maps describe.
func dumpSpace(t *testing.T, variant, mode string) (string, cDump, *Space) {
	t.Helper()
	bin := cFixture(t, variant)
	d := runCDump(t, bin, mode)
	return bin, d, NewSpace(ParseMaps(d.maps), hostOpen)
}

// runCDump runs a C fixture in mode and parses its dump.
func runCDump(t *testing.T, bin, mode string) cDump {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dump")
	if b, err := exec.Command(bin, mode, out).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, mode, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 17*8+16 {
		t.Fatalf("dump of %d bytes", len(data))
	}
	var d cDump
	for i := range d.regs.All {
		d.regs.All[i] = binary.LittleEndian.Uint64(data[i*8:])
	}
	sp := binary.LittleEndian.Uint64(data[136:])
	n := binary.LittleEndian.Uint64(data[144:])
	if 152+n > uint64(len(data)) {
		t.Fatalf("dump: stack of %d bytes overruns the file", n)
	}
	d.stack = region{sp, data[152 : 152+n]}
	d.maps = string(data[152+n:])
	return d
}

// goDump is what goprog wrote.
type goDump struct {
	regs   Regs
	stack  region
	oracle []string
	maps   string
}

func runGoDump(t *testing.T, bin string) goDump {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dump")
	if b, err := exec.Command(bin, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	u := func(off uint64) uint64 {
		if off+8 > uint64(len(data)) {
			t.Fatalf("go dump truncated at %d", off)
		}
		return binary.LittleEndian.Uint64(data[off:])
	}
	var d goDump
	d.regs.Rip, d.regs.Rsp, d.regs.Rbp = u(0), u(8), u(16)
	n := u(24)
	d.stack = region{d.regs.Rsp, data[32 : 32+n]}
	off := 32 + n
	on, mn := u(off), u(off+8)
	off += 16
	d.oracle = strings.Split(string(data[off:off+on]), "\n")
	d.maps = string(data[off+on : off+on+mn])
	return d
}

// nmSymbols returns nm's defined symbols of bin: name to address.
func nmSymbols(t *testing.T, bin string) map[string]uint64 {
	t.Helper()
	syms, _ := nmSized(t, bin)
	return syms
}

// nmSized returns nm's defined symbols of bin with their addresses and sizes.
func nmSized(t *testing.T, bin string) (map[string]uint64, map[string]uint64) {
	t.Helper()
	nm, err := exec.LookPath("nm")
	if err != nil {
		skipf(t, "no nm in PATH")
	}
	out, err := exec.Command(nm, "--defined-only", "-S", bin).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	syms, sizes := map[string]uint64{}, map[string]uint64{}
	for _, line := range strings.Split(string(out), "\n") {
		var addr, size uint64
		var kind, name string
		if n, _ := fmt.Sscanf(line, "%x %x %s %s", &addr, &size, &kind, &name); n == 4 {
			syms[name], sizes[name] = addr, size
		} else if n, _ := fmt.Sscanf(line, "%x %s %s", &addr, &kind, &name); n == 3 {
			syms[name] = addr
		}
	}
	return syms, sizes
}

// fakeMaps maps bin at base as the kernel would: one mapping per PT_LOAD.
func fakeMaps(t *testing.T, bin string, base uint64) []Mapping {
	t.Helper()
	r, size, err := hostOpen(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := openELF(r, size)
	if err != nil {
		t.Fatal(err)
	}
	var maps []Mapping
	for _, p := range f.Progs {
		if p.Type != 1 { // PT_LOAD
			continue
		}
		perms := []byte("---p")
		if p.Flags&4 != 0 {
			perms[0] = 'r'
		}
		if p.Flags&2 != 0 {
			perms[1] = 'w'
		}
		if p.Flags&1 != 0 {
			perms[2] = 'x'
		}
		start := base + p.Vaddr&^0xfff
		end := (base + p.Vaddr + p.Memsz + 0xfff) &^ 0xfff
		maps = append(maps, Mapping{Start: start, End: end, Offset: p.Off &^ 0xfff, Perms: string(perms), Path: bin})
	}
	return maps
}

// lines splits command output.
func lines(b []byte) []string {
	return strings.Split(strings.TrimRight(string(bytes.TrimSpace(b)), "\n"), "\n")
}
