package debuginfo

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// TestFormatGlobals prints the C fixture's initialized globals from the
// file's data, as gdb would print them at the start of main.
func TestFormatGlobals(t *testing.T) {
	for _, variant := range []string{"O0-nopie", "O2-nopie", "static"} {
		t.Run(variant, func(t *testing.T) {
			s, bin, _ := spaceFor(t, variant)
			syms := nmSymbols(t, bin)
			mem := fileMem(s)
			cases := []struct{ name, want string }{
				{"counter", "42"},
				{"sarr", "{1, 2, 3, 4, 5}"},
				{"zeros", "{0 <repeats 100 times>}"},
				{"greeting", `"hello"`},
				{"msg", `^0x[0-9a-f]+ "world"$`},
				{"rec", `{name = "abc", p = {x = 1, y = -2}, d = 1.5, ptr = 0x` + hex(syms["counter"]) + ` <counter>, flags = 5, neg = -3}`},
				{"fl", "2.5"},
				{"flag", "true"},
				{"ch", "65 'A'"},
				{"big", "-1234567890123"},
				{"us", "65535"},
				{"color", "GREEN"},
				{"fnptr", "0x0"},
				{"sink", "0"},
				{"c", "{int (int)} 0x" + hex(syms["c"]) + " <c>"},
				{"main", "{int (int, char **)} 0x" + hex(syms["main"]) + " <main>"},
			}
			for _, c := range cases {
				v, err := s.Lookup(c.name)
				if err != nil {
					t.Errorf("Lookup(%s): %v", c.name, err)
					continue
				}
				if v.Addr != syms[c.name] {
					t.Errorf("%s at %#x, nm says %#x", c.name, v.Addr, syms[c.name])
				}
				got := s.Format(v, mem)
				if strings.HasPrefix(c.want, "^") {
					if !regexp.MustCompile(c.want).MatchString(got) {
						t.Errorf("%s = %s, want match of %s", c.name, got, c.want)
					}
				} else if got != c.want {
					t.Errorf("%s = %s, want %s", c.name, got, c.want)
				}
			}
			v, _ := s.Lookup("rec")
			if v.Type == nil || v.Type.Kind != KindStruct || v.Type.Name != "struct rec" || len(v.Type.Fields) != 6 || v.Size != 40 {
				t.Errorf("rec type %+v size %d", v.Type, v.Size)
			}
			if _, err := s.Lookup("no_such_symbol"); err == nil {
				t.Errorf("Lookup of a missing name succeeded")
			}
		})
	}
}

func hex(v uint64) string { return fmt.Sprintf("%x", v) }

// TestFormatNoDWARF looks up globals in a build without -g: the symbol
// table gives address and size only.
func TestFormatNoDWARF(t *testing.T) {
	bin := cFixture(t, "nocfi")
	s := NewSpace(fakeMaps(t, bin, pieBase), hostOpen)
	v, err := s.Lookup("counter")
	if err != nil {
		t.Fatal(err)
	}
	if v.Type != nil || v.Size != 4 {
		t.Errorf("counter: %+v", v)
	}
	if got := s.Format(v, fileMem(s)); got != "42" {
		t.Errorf("counter = %s, want 42", got)
	}
	v, err = s.Lookup("rec")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Format(v, fileMem(s)); got != "<data variable, no debug info>" {
		t.Errorf("rec = %s", got)
	}
	v, err = s.Lookup("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Format(v, fileMem(s)); !strings.HasPrefix(got, "{<text variable, no debug info>} 0x") {
		t.Errorf("c = %s", got)
	}
}

// TestFormatValues checks the printer on hand-built types and memory.
func TestFormatValues(t *testing.T) {
	i32 := &Type{Kind: KindInt, Name: "int", Size: 4}
	u8 := &Type{Kind: KindUint, Name: "unsigned char", Size: 1}
	char := &Type{Kind: KindChar, Name: "char", Size: 1}
	dbl := &Type{Kind: KindFloat, Name: "double", Size: 8}
	flt := &Type{Kind: KindFloat, Name: "float", Size: 4}
	arr := func(e *Type, n int64) *Type { return &Type{Kind: KindArray, Elem: e, Len: n, Size: n * e.Size} }
	ptr := func(e *Type) *Type { return &Type{Kind: KindPointer, Elem: e, Size: 8, Name: ptrName(e)} }
	i32s := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = le.AppendUint32(b, uint32(v))
		}
		return b
	}
	f64 := func(f float64) []byte { return le.AppendUint64(nil, math.Float64bits(f)) }
	f32 := func(f float32) []byte { return le.AppendUint32(nil, math.Float32bits(f)) }
	long := make([]int32, 300)
	for i := range long {
		long[i] = int32(i)
	}
	const base = 0x1000
	cases := []struct {
		name string
		t    *Type
		mem  []byte
		want string
	}{
		{"negative int", i32, i32s(-7), "-7"},
		{"uint8", u8, []byte{200}, "200"},
		{"char newline", char, []byte{'\n'}, `10 '\n'`},
		{"char nul", char, []byte{0}, `0 '\000'`},
		{"char high", char, []byte{0xc8}, `-56 '\310'`},
		{"double", dbl, f64(3.14), "3.1400000000000001"},
		{"double int", dbl, f64(100), "100"},
		{"double inf", dbl, f64(math.Inf(-1)), "-inf"},
		{"float", flt, f32(0.1), "0.100000001"},
		{"repeats inside", arr(i32, 14), i32s(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2), "{1, 0 <repeats 12 times>, 2}"},
		{"short run", arr(i32, 3), i32s(5, 5, 5), "{5, 5, 5}"},
		{"capped", arr(i32, 300), i32s(long...), "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"},
		{"char array no NUL", arr(char, 3), []byte("a\"b"), `"a\"b"`},
		{"struct", &Type{Kind: KindStruct, Name: "struct s", Size: 8, Fields: []Field{{Name: "a", Type: i32}, {Name: "b", Off: 4, Type: i32}}}, i32s(1, 2), "{a = 1, b = 2}"},
		{"empty struct", &Type{Kind: KindStruct, Name: "struct e"}, nil, "{<No data fields>}"},
		{"null pointer", ptr(i32), make([]byte, 8), "(int *) 0x0"},
		{"pointer", ptr(i32), le.AppendUint64(nil, 0xdead0), "(int *) 0xdead0"},
		{"char pointer", ptr(char), append(le.AppendUint64(nil, base+8), "hi\x00"...), `0x1008 "hi"`},
		{"bad char pointer", ptr(char), le.AppendUint64(nil, 0x9999), "0x9999 <error: Cannot access memory at address 0x9999>"},
		{"bit-fields", &Type{Kind: KindStruct, Size: 4, Fields: []Field{{Name: "u", Type: i32, BitSize: 3}, {Name: "s", Type: i32, BitSize: 4, BitOff: 3}}}, i32s(0x5 | 0xd<<3), "{u = -3, s = -3}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSpace(nil, nil)
			got := s.Format(Var{Name: "v", Addr: base, Type: c.t}, regionsMem(region{base, c.mem}))
			if c.name == "capped" {
				if !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, "199...}") {
					t.Errorf("got %s", got)
				}
				return
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	s := NewSpace(nil, nil)
	if got := s.Format(Var{Name: "v", Addr: 0x5000, Type: i32}, regionsMem()); got != "<error: Cannot access memory at address 0x5000>" {
		t.Errorf("unreadable: %s", got)
	}
}
