package debuginfo

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []Mapping
	}{
		{"exe", "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234   /usr/bin/cat\n",
			[]Mapping{{0x55d0c0a00000, 0x55d0c0a02000, 0, "r--p", "/usr/bin/cat"}}},
		{"offset and spaces in path", "7f00-8f00 r-xp 00028000 fd:00 99 /tmp/my dir/lib.so (deleted)",
			[]Mapping{{0x7f00, 0x8f00, 0x28000, "r-xp", "/tmp/my dir/lib.so (deleted)"}}},
		{"anonymous and special", "1000-2000 rw-p 00000000 00:00 0 \n7ffd000-7fff000 r-xp 00000000 00:00 0                  [vdso]\r\n",
			[]Mapping{{0x1000, 0x2000, 0, "rw-p", ""}, {0x7ffd000, 0x7fff000, 0, "r-xp", "[vdso]"}}},
		{"garbage skipped", "hello\n1000-zz r--p 0 0 0 x\n2000-1000 r--p 0 0 0 x\n\n3000-4000 r--p 0 0:0 0\n",
			[]Mapping{{0x3000, 0x4000, 0, "r--p", ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseMaps(c.text); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestBias checks the load bias of PIE and non-PIE builds against where
// the kernel really mapped them (the fixture's own maps).
func TestBias(t *testing.T) {
	for _, variant := range []string{"O2-pie", "O2-nopie"} {
		t.Run(variant, func(t *testing.T) {
			bin, d, s := dumpSpace(t, variant, "plain")
			mod, _, _ := s.moduleAt(d.regs.All[regRA], nil)
			if mod == nil {
				t.Fatalf("no module at rip %#x", d.regs.All[regRA])
			}
			syms := nmSymbols(t, bin)
			// The captured rip lies inside c.
			if got := d.regs.All[regRA] - mod.bias; got < syms["c"] || got > syms["c"]+0x200 {
				t.Errorf("rip-bias = %#x, c at %#x (bias %#x)", got, syms["c"], mod.bias)
			}
			if variant == "O2-nopie" && mod.bias != 0 {
				t.Errorf("non-PIE bias %#x", mod.bias)
			}
			if variant == "O2-pie" && mod.bias&0xfff != 0 {
				t.Errorf("PIE bias %#x not page aligned", mod.bias)
			}
			// libc is found too, with a bias of its own.
			var libc string
			for _, m := range ParseMaps(d.maps) {
				if strings.Contains(m.Path, "libc.so") {
					libc = m.Path
				}
			}
			if libc == "" {
				t.Fatal("no libc in maps")
			}
			if s.module(libc) == nil {
				t.Errorf("libc: %v", s.Err(libc))
			}
		})
	}
}

// TestMalformedELF hands truncated and corrupted copies of a real binary
// to every entry point: answers may be unknown, but nothing panics.
func TestMalformedELF(t *testing.T) {
	bin := cFixture(t, "O2-nopie")
	orig, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms := nmSymbols(t, bin)
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 60; i++ {
		b := append([]byte(nil), orig...)
		switch i % 3 {
		case 0:
			b = b[:rng.Intn(len(b))]
		case 1:
			for j := 0; j < 200; j++ {
				b[rng.Intn(len(b))] = byte(rng.Intn(256))
			}
		case 2:
			// Corrupt the debug sections only, where parsing is deepest.
			start := len(b) / 2
			for j := 0; j < 500; j++ {
				b[start+rng.Intn(len(b)-start)] = byte(rng.Intn(256))
			}
		}
		open := func(string) (io.ReaderAt, int64, error) { return bytes.NewReader(b), int64(len(b)), nil }
		s := NewSpace(fakeMaps(t, bin, 0), open)
		s.Symbol(syms["c"] + 3)
		s.Lookup("rec")
		if v, err := s.Lookup("rec"); err == nil {
			s.Format(v, fileMem(s))
		}
		s.Disassemble(nil, syms["main"], 20)
		s.Backtrace(Regs{Rip: syms["c"] + 8, Rsp: 0x1000, Rbp: 0x1100}, regionsMem(region{0x1000, make([]byte, 512)}), 10)
		s.SourceLines("prog.c", 10, 2, open)
	}
	open := func(string) (io.ReaderAt, int64, error) { return nil, 0, errors.New("nope") }
	s := NewSpace(fakeMaps(t, bin, 0), open)
	if _, ok := s.Symbol(syms["c"]); !ok {
		t.Errorf("Symbol of a mapped PC whose file cannot open: not ok")
	}
	if err := s.Err(bin); err == nil || !strings.Contains(err.Error(), bin) {
		t.Errorf("Err = %v", err)
	}
}

// TestSourceLines lists lines through the opener, then the host, and
// names the file when it is missing.
func TestSourceLines(t *testing.T) {
	s, _, _ := spaceFor(t, "O0-nopie")
	src, err := os.ReadFile("testdata/prog.c")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(string(src), "\n")
	// From the host (the opener fails).
	none := func(string) (io.ReaderAt, int64, error) { return nil, 0, os.ErrNotExist }
	got, err := s.SourceLines("prog.c", 10, 2, none)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Line != 8 || got[4].Line != 12 || got[2].Text != want[9] {
		t.Errorf("host lines %+v", got)
	}
	// From the recording: the opener's copy wins.
	rec := "one\ntwo\nthree\n"
	fake := func(p string) (io.ReaderAt, int64, error) {
		if !strings.HasSuffix(p, "/testdata/prog.c") {
			return nil, 0, os.ErrNotExist
		}
		return strings.NewReader(rec), int64(len(rec)), nil
	}
	got, err = s.SourceLines("prog.c", 1, 5, fake)
	if err != nil || len(got) != 3 || got[2].Text != "three" || got[0].Line != 1 {
		t.Errorf("recorded lines %+v, %v", got, err)
	}
	if _, err := s.SourceLines("prog.c", 4, 1, fake); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("past the end: %v", err)
	}
	if _, err := s.SourceLines("missing.c", 1, 1, none); err == nil || !strings.Contains(err.Error(), "missing.c") {
		t.Errorf("missing file: %v", err)
	}
	// A Location's file works as given.
	loc, _ := s.Symbol(nmSymbols(t, cFixture(t, "O0-nopie"))["main"])
	if got, err := s.SourceLines(loc.File, loc.Line, 0, nil); err != nil || len(got) != 1 || !strings.Contains(got[0].Text, "main") {
		t.Errorf("main's line: %+v, %v", got, err)
	}
}
