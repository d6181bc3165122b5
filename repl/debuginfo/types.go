package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"strings"
)

var le = binary.LittleEndian

// DWARF expression opcodes used outside the CFI interpreter.
const opAddr = 0x03 // DW_OP_addr

// Kind classifies a Type.
type Kind int

// Kinds of types.
const (
	KindUnknown Kind = iota // void, unspecified, or a type we do not model
	KindInt                 // signed integer
	KindUint                // unsigned integer
	KindFloat               // IEEE float of 4 or 8 bytes, x87 extended of 10 or 16
	KindBool
	KindChar // C char, signed char, unsigned char
	KindPointer
	KindArray
	KindStruct // struct, union or class
	KindEnum
	KindFunc // a function (the Var is its code)
)

// Type is a small description of a DWARF type, enough to print values.
type Type struct {
	Kind   Kind
	Name   string // C-style name: "int", "char *", "struct point", "int [3]"; Go names as DWARF gives them
	Size   int64  // bytes; 0 if unknown
	Elem   *Type  // pointed-to type (KindPointer) or element type (KindArray)
	Len    int64  // element count (KindArray); -1 if unknown
	Fields []Field
	Enums  []Enumerator // KindEnum
}

// Field is a member of a struct or union.
type Field struct {
	Name    string
	Off     int64 // byte offset
	Type    *Type
	BitSize int64 // bit-field width, 0 if not a bit-field
	BitOff  int64 // bit offset from Off*8 (little-endian, from the least significant bit)
}

// Enumerator is one named value of an enum.
type Enumerator struct {
	Name string
	Val  int64
}

// Var is a global or static variable, or a function.
type Var struct {
	Name   string
	Addr   uint64 // run-time address (bias applied)
	Size   uint64
	Type   *Type // nil when only the ELF symbol table knows the name
	Module string
	// Value, if not nil, is the value itself, which has no address (a
	// variable in a register, &x): Addr is then not read.
	Value []byte
}

// Lookup finds a global or static variable or a function by name in the
// modules of the space, the executable first. DWARF entries win over ELF
// symbols; an ELF-only data symbol has a nil Type. The error wraps
// ErrNotFound when no module defines name.
func (s *Space) Lookup(name string) (Var, error) {
	for _, m := range s.modules() {
		if v, ok := m.lookup(name); ok {
			return v, nil
		}
	}
	return Var{}, fmt.Errorf("%w %q in the current context", ErrNotFound, name)
}

// Caps for type conversion and printing.
const (
	maxTypeDepth  = 16
	maxFields     = 1024
	maxElements   = 200 // gdb's "print elements" default
	repeatMin     = 10  // gdb's "print repeats" default
	maxValueBytes = 1 << 20
)

// convertType converts the DWARF type at off, or returns nil.
func (m *module) convertType(off dwarf.Offset) *Type {
	var dt dwarf.Type
	if err := guard(func() { dt, _ = m.dw.Type(off) }); err != nil || dt == nil {
		return nil
	}
	c := converter{seen: map[dwarf.Type]*Type{}}
	return c.convert(dt, 0)
}

type converter struct {
	seen map[dwarf.Type]*Type
}

// convert builds a Type; cycles (a struct pointing to itself) share nodes.
func (c *converter) convert(dt dwarf.Type, depth int) *Type {
	if dt == nil {
		return &Type{Kind: KindUnknown, Name: "void"}
	}
	if t, ok := c.seen[dt]; ok {
		return t
	}
	t := &Type{Size: dt.Size(), Name: dt.Common().Name}
	c.seen[dt] = t
	if depth > maxTypeDepth {
		t.Kind = KindUnknown
		return t
	}
	switch x := dt.(type) {
	case *dwarf.IntType:
		t.Kind = KindInt
	case *dwarf.UintType:
		t.Kind = KindUint
	case *dwarf.AddrType:
		t.Kind = KindUint
	case *dwarf.CharType, *dwarf.UcharType:
		t.Kind = KindChar
	case *dwarf.BoolType:
		t.Kind = KindBool
	case *dwarf.FloatType:
		t.Kind = KindFloat
	case *dwarf.PtrType:
		t.Kind, t.Size = KindPointer, 8
		t.Elem = c.convert(x.Type, depth+1)
		if t.Name == "" {
			t.Name = ptrName(t.Elem)
		}
	case *dwarf.ArrayType:
		t.Kind, t.Len = KindArray, x.Count
		t.Elem = c.convert(x.Type, depth+1)
		if t.Name == "" {
			if x.Count >= 0 {
				t.Name = fmt.Sprintf("%s [%d]", t.Elem.Name, x.Count)
			} else {
				t.Name = t.Elem.Name + " []"
			}
		}
	case *dwarf.StructType:
		t.Kind = KindStruct
		if t.Name == "" || t.Name == x.StructName {
			t.Name = strings.TrimSpace(x.Kind + " " + x.StructName)
			if x.StructName == "" {
				t.Name = x.Kind + " {...}"
			}
		}
		if strings.HasPrefix(x.StructName, "[]") || x.StructName == "string" {
			t.Name = x.StructName // Go slices and strings
		}
		for i, f := range x.Field {
			if i >= maxFields {
				break
			}
			fld := Field{Name: f.Name, Off: f.ByteOffset, Type: c.convert(f.Type, depth+1), BitSize: f.BitSize}
			if f.BitSize > 0 {
				if f.DataBitOffset != 0 || f.BitOffset == 0 {
					fld.Off = f.DataBitOffset / 8
					fld.BitOff = f.DataBitOffset % 8
				} else if f.ByteSize > 0 {
					// DWARF 2 style: BitOffset counts from the most significant bit of the storage unit.
					fld.BitOff = f.ByteSize*8 - f.BitOffset - f.BitSize
				}
			}
			t.Fields = append(t.Fields, fld)
		}
	case *dwarf.EnumType:
		t.Kind = KindEnum
		if t.Name == "" || t.Name == x.EnumName {
			t.Name = strings.TrimSpace("enum " + x.EnumName)
		}
		for _, v := range x.Val {
			t.Enums = append(t.Enums, Enumerator{v.Name, v.Val})
		}
	case *dwarf.TypedefType:
		u := c.convert(x.Type, depth+1)
		name := t.Name
		*t = *u
		t.Name = name
	case *dwarf.QualType:
		u := c.convert(x.Type, depth+1)
		*t = *u
	case *dwarf.FuncType:
		t.Kind, t.Name = KindFunc, "func"
	default:
		t.Kind = KindUnknown
		if t.Name == "" {
			t.Name = dt.String()
		}
	}
	return t
}

// ptrName is the C name of a pointer to elem.
func ptrName(elem *Type) string {
	if strings.HasSuffix(elem.Name, "*") {
		return elem.Name + "*"
	}
	return elem.Name + " *"
}

// Format returns v's value as gdb prints it: 42, true, 97 'a', 1.5,
// (int *) 0x4c6f00 <g>, 0x402004 "abc" for char pointers, {a = 1, b = 2}
// for structs, "abc" for char arrays (up to the first NUL), {1, 2, 3} for
// arrays, with runs of 10 or more shown as "0 <repeats 15 times>" and
// output capped at 200 elements. Functions print as {type} 0x… <name>.
// A variable without DWARF type prints as an integer of its size when
// that is 1, 2, 4 or 8 bytes. Unreadable memory prints as gdb's
// <error: Cannot access memory at address 0x…>.
func (s *Space) Format(v Var, mem Mem) string {
	t := v.Type
	if t != nil && t.Kind == KindFunc {
		return fmt.Sprintf("{%s} %#x <%s>", t.Name, v.Addr, v.Name)
	}
	size := v.Size
	if t != nil && t.Size > 0 {
		size = uint64(t.Size)
	}
	if t == nil {
		switch size {
		case 1, 2, 4, 8:
			t = &Type{Kind: KindInt, Size: int64(size)}
		default:
			return "<data variable, no debug info>"
		}
	}
	if size > maxValueBytes {
		size = maxValueBytes
	}
	b, err := v.Value, error(nil)
	if b == nil {
		b, err = readFull(mem, v.Addr, int(size))
	}
	if err != nil {
		return memError(v.Addr)
	}
	p := printer{s: s, mem: mem}
	if t.Kind == KindPointer && !isChar(t.Elem) && t.Elem.Kind != KindFunc {
		return fmt.Sprintf("(%s) %s", t.Name, p.value(t, b, 0))
	}
	return p.value(t, b, 0)
}

// readFull reads exactly n bytes at addr.
func readFull(mem Mem, addr uint64, n int) ([]byte, error) {
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	if mem == nil {
		return nil, fmt.Errorf("no memory")
	}
	got, err := mem(addr, b)
	if got < n {
		if err == nil {
			err = fmt.Errorf("short read at %#x", addr+uint64(got))
		}
		return nil, err
	}
	return b, nil
}

func memError(addr uint64) string {
	return fmt.Sprintf("<error: Cannot access memory at address %#x>", addr)
}

func isChar(t *Type) bool { return t != nil && t.Kind == KindChar && t.Size == 1 }

// printer formats values; s and mem resolve pointers.
type printer struct {
	s   *Space
	mem Mem
}

// value formats b, which holds at least t.Size bytes, as a value of type t.
func (p printer) value(t *Type, b []byte, depth int) string {
	if depth > maxTypeDepth {
		return "{...}"
	}
	if t.Size > 0 && int64(len(b)) < t.Size && t.Kind != KindArray {
		return "<incomplete>"
	}
	switch t.Kind {
	case KindInt, KindEnum:
		v := signExtend(b, t.Size)
		if t.Kind == KindEnum {
			for _, e := range t.Enums {
				if e.Val == v {
					return e.Name
				}
			}
		}
		return fmt.Sprint(v)
	case KindUint:
		return fmt.Sprint(unsigned(b, t.Size))
	case KindBool:
		if unsigned(b, t.Size) != 0 {
			return "true"
		}
		return "false"
	case KindChar:
		c := b[0]
		if t.Name == "unsigned char" {
			return fmt.Sprintf("%d %s", c, quoteChar(c))
		}
		return fmt.Sprintf("%d %s", int8(c), quoteChar(c))
	case KindFloat:
		return formatFloat(b, t.Size)
	case KindPointer:
		return p.pointer(t, le.Uint64(b))
	case KindArray:
		return p.array(t, b, depth)
	case KindStruct:
		return p.structure(t, b, depth)
	}
	return fmt.Sprintf("<%s of %d bytes>", t.Name, t.Size)
}

func signExtend(b []byte, size int64) int64 {
	u := unsigned(b, size)
	if size <= 0 || size >= 8 {
		return int64(u)
	}
	shift := 64 - 8*uint(size)
	return int64(u<<shift) >> shift
}

func unsigned(b []byte, size int64) uint64 {
	var u uint64
	for i := int64(0); i < size && i < 8 && i < int64(len(b)); i++ {
		u |= uint64(b[i]) << (8 * i)
	}
	return u
}

// pointer formats an address, naming the symbol it points to and, for
// char pointers, the string there.
func (p printer) pointer(t *Type, addr uint64) string {
	out := fmt.Sprintf("%#x", addr)
	if addr == 0 {
		return out
	}
	if name := p.s.symbolName(addr, p.mem); name != "" {
		out += " <" + name + ">"
	}
	if isChar(t.Elem) {
		out += " " + p.cString(addr)
	}
	return out
}

// cString reads a NUL-terminated string of at most maxElements bytes.
func (p printer) cString(addr uint64) string {
	var buf []byte
	chunk := make([]byte, 64)
	for len(buf) < maxElements {
		n, _ := p.mem(addr+uint64(len(buf)), chunk)
		if n == 0 {
			if len(buf) == 0 {
				return memError(addr)
			}
			break
		}
		for _, c := range chunk[:n] {
			if c == 0 {
				return quoteString(buf, false)
			}
			buf = append(buf, c)
			if len(buf) == maxElements {
				break
			}
		}
	}
	return quoteString(buf, len(buf) >= maxElements)
}

// array formats an array: a string for char arrays, else elements in braces.
func (p printer) array(t *Type, b []byte, depth int) string {
	es := t.Elem.Size
	if t.Len < 0 || es <= 0 {
		return "0x" + fmt.Sprintf("%x", b)
	}
	n := t.Len
	if int64(len(b)) < n*es {
		n = int64(len(b)) / es
	}
	if isChar(t.Elem) {
		s := b[:n]
		for i, c := range s {
			if c == 0 {
				return quoteString(s[:i], false)
			}
		}
		if len(s) > maxElements {
			return quoteString(s[:maxElements], true)
		}
		return quoteString(s, false)
	}
	var parts []string
	shown := int64(0)
	for i := int64(0); i < n && shown < maxElements; {
		elem := b[i*es : (i+1)*es]
		j := i + 1
		for j < n && string(b[j*es:(j+1)*es]) == string(elem) {
			j++
		}
		v := p.value(t.Elem, elem, depth+1)
		if j-i >= repeatMin {
			parts = append(parts, fmt.Sprintf("%s <repeats %d times>", v, j-i))
			shown += repeatMin
			i = j
			continue
		}
		parts = append(parts, v)
		shown++
		i++
		if shown >= maxElements && i < n {
			parts[len(parts)-1] += "..." // gdb: {0, 1, … 199...}
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// structure formats a struct or union as {a = 1, b = 2}; Go strings print quoted.
func (p printer) structure(t *Type, b []byte, depth int) string {
	if t.Name == "string" && len(t.Fields) == 2 && t.Fields[0].Type.Kind == KindPointer && len(b) >= 16 {
		ptr, n := le.Uint64(b), le.Uint64(b[8:])
		if n > maxElements {
			n = maxElements
		}
		s, err := readFull(p.mem, ptr, int(n))
		if err != nil {
			return memError(ptr)
		}
		return quoteString(s, le.Uint64(b[8:]) > maxElements)
	}
	if len(t.Fields) == 0 {
		return "{<No data fields>}"
	}
	var parts []string
	for _, f := range t.Fields {
		if f.Off < 0 || f.Off > int64(len(b)) {
			parts = append(parts, f.Name+" = <invalid>")
			continue
		}
		fb := b[f.Off:]
		var v string
		if f.BitSize > 0 {
			v = bitField(f, fb)
		} else if f.Type.Size > int64(len(fb)) {
			v = "<incomplete>"
		} else {
			v = p.value(f.Type, fb, depth+1)
		}
		if f.Name == "" {
			parts = append(parts, v)
		} else {
			parts = append(parts, f.Name+" = "+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// bitField extracts and formats a bit-field member.
func bitField(f Field, b []byte) string {
	var u uint64
	for i := 0; i < 8 && i < len(b); i++ {
		u |= uint64(b[i]) << (8 * i)
	}
	if f.BitOff+f.BitSize > 64 || f.BitSize > 63 {
		return "<bit-field>"
	}
	v := (u >> uint(f.BitOff)) & (1<<uint(f.BitSize) - 1)
	if f.Type.Kind == KindInt || f.Type.Kind == KindEnum || (f.Type.Kind == KindChar && f.Type.Name != "unsigned char") {
		shift := 64 - uint(f.BitSize)
		return fmt.Sprint(int64(v<<shift) >> shift)
	}
	if f.Type.Kind == KindBool {
		return fmt.Sprint(v != 0)
	}
	return fmt.Sprint(v)
}
