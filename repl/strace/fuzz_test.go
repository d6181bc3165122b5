package strace

import (
	"testing"
	"unicode/utf8"
)

// FuzzFormat formats random calls against a random memory image mapped
// at imageBase: nothing may panic and the output must be valid UTF-8.
// memMode 1 makes Mem claim more bytes than asked, 2 a negative count.
func FuzzFormat(f *testing.F) {
	m, cases := realCalls()
	for _, tc := range cases {
		a := tc.c.Args
		f.Add(tc.c.Nr, a[0], a[1], a[2], a[3], a[4], a[5], tc.c.Done, tc.c.Result, tc.opt.MaxString, tc.opt.Out, 0, m.data)
	}
	f.Fuzz(func(t *testing.T, nr int, a0, a1, a2, a3, a4, a5 uint64, done bool, result int64, maxString int, out bool, memMode int, img []byte) {
		im := &image{base: imageBase, data: img}
		mem := im.mem
		switch memMode % 3 {
		case 1:
			mem = func(addr uint64, b []byte) (int, error) {
				n, err := im.mem(addr, b)
				return n + 5, err
			}
		case 2:
			mem = func(addr uint64, b []byte) (int, error) { return -1, errFault }
		}
		c := Call{Nr: nr, Args: [6]uint64{a0, a1, a2, a3, a4, a5}, Done: done, Result: result}
		opt := Options{MaxString: maxString, Out: out}
		for _, s := range []string{Format(c, mem, opt), FormatResult(c), FormatSiginfo(img), Signal(int(a0))} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8: %q", s)
			}
		}
		if nr >= 0 && nr < 512 {
			// The table's calls with the image's own addresses.
			c.Args = [6]uint64{imageBase + a0%4096, imageBase + a1%4096, a2 % 64, imageBase + a3%4096, a4 % 32, a5}
			if s := Format(c, mem, opt); !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8: %q", s)
			}
		}
		name, text := Errno(int(result))
		if !utf8.ValidString(name + text) {
			t.Fatal("errno text")
		}
	})
}
