package debuginfo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Eval evaluates a C-like expression of variables, as gdb's print takes
// it: a name (a local, a global, or a Go package's "main.x"), then any of
// .field, ->field (a pointer to a struct is followed for . too, as in Go)
// and [index] (of an array, a pointer or a Go slice), with * and &
// before, and parentheses; and C's integer operators on such values and
// numbers (arith.go). lookup resolves names.
func Eval(expr string, lookup func(name string) (Var, error), mem Mem) (Var, error) {
	p := &parser{src: expr, lookup: lookup, mem: mem}
	p.next()
	v, err := p.binary(0)
	if err != nil {
		return Var{}, err
	}
	if p.tok != "" {
		return Var{}, fmt.Errorf("unexpected %q in %q", p.tok, expr)
	}
	return v, nil
}

// errSyntax is a malformed expression.
var errSyntax = errors.New("syntax error")

type parser struct {
	src    string
	pos    int
	tok    string // the current token; "" at the end
	lookup func(string) (Var, error)
	mem    Mem
}

// next reads the next token: an identifier (with dots and colons, as Go
// and C++ names have them), a number, ->, or one character.
func (p *parser) next() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	start := p.pos
	c := p.src[p.pos]
	switch {
	case isIdentStart(c):
		for p.pos < len(p.src) && (isIdentStart(p.src[p.pos]) || p.src[p.pos] >= '0' && p.src[p.pos] <= '9' ||
			p.src[p.pos] == '.' || p.src[p.pos] == ':') {
			p.pos++
		}
	case c >= '0' && c <= '9':
		for p.pos < len(p.src) && (isIdentStart(p.src[p.pos]) || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
			p.pos++
		}
	case strings.HasPrefix(p.src[p.pos:], "->"):
		p.pos += 2
	case len(p.src) >= p.pos+2 && contains(twoCharOps, p.src[p.pos:p.pos+2]):
		p.pos += 2
	default:
		p.pos++
	}
	p.tok = p.src[start:p.pos]
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (p *parser) unary() (Var, error) {
	switch p.tok {
	case "*":
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return p.deref(v)
	case "&":
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return addressOf(v)
	case "-", "!", "~":
		op := p.tok
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return p.negate(op, v)
	}
	return p.postfix()
}

func (p *parser) postfix() (Var, error) {
	v, err := p.primary()
	for err == nil {
		switch p.tok {
		case ".", "->":
			op := p.tok
			p.next()
			if !isIdentStart(firstByte(p.tok)) {
				return v, fmt.Errorf("%w: a field name must follow %s", errSyntax, op)
			}
			name := p.tok
			p.next()
			for _, f := range strings.Split(name, ".") {
				if v, err = p.field(v, f); err != nil {
					return v, err
				}
			}
		case "[":
			p.next()
			n, perr := strconv.ParseInt(p.tok, 0, 64)
			if perr != nil {
				return v, fmt.Errorf("%w: the index must be a number, not %q", errSyntax, p.tok)
			}
			p.next()
			if p.tok != "]" {
				return v, fmt.Errorf("%w: missing ]", errSyntax)
			}
			p.next()
			v, err = p.index(v, n)
		default:
			return v, nil
		}
	}
	return v, err
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// primary is a parenthesized expression or a name. A dotted name is the
// longest prefix that names something (Go's main.x, a C struct's s.f),
// its rest fields.
func (p *parser) primary() (Var, error) {
	if p.tok == "(" {
		p.next()
		v, err := p.binary(0)
		if err != nil {
			return v, err
		}
		if p.tok != ")" {
			return v, fmt.Errorf("%w: missing )", errSyntax)
		}
		p.next()
		return v, nil
	}
	if c := firstByte(p.tok); c >= '0' && c <= '9' {
		v, err := number(p.tok)
		p.next()
		return v, err
	}
	if !isIdentStart(firstByte(p.tok)) {
		if p.tok == "" {
			return Var{}, fmt.Errorf("%w: the expression ends early", errSyntax)
		}
		return Var{}, fmt.Errorf("%w at %q", errSyntax, p.tok)
	}
	name := p.tok
	p.next()
	parts := strings.Split(name, ".")
	var firstErr error
	for n := len(parts); n >= 1; n-- {
		v, err := p.lookup(strings.Join(parts[:n], "."))
		if err != nil {
			if firstErr == nil || n == 1 {
				firstErr = err
			}
			continue
		}
		for _, f := range parts[n:] {
			if v, err = p.field(v, f); err != nil {
				return v, err
			}
		}
		return v, nil
	}
	return Var{}, firstErr
}

// pointerValue reads v, a pointer, and returns its value.
func (p *parser) pointerValue(v Var) (uint64, error) {
	if v.Value != nil {
		var b [8]byte
		copy(b[:], v.Value)
		return le.Uint64(b[:]), nil
	}
	b, err := readFull(p.mem, v.Addr, 8)
	if err != nil {
		return 0, fmt.Errorf("cannot access memory at address %#x", v.Addr)
	}
	return le.Uint64(b), nil
}

// deref follows v, a pointer.
func (p *parser) deref(v Var) (Var, error) {
	t := v.Type
	if t == nil || t.Kind != KindPointer {
		return v, fmt.Errorf("%s is not a pointer", v.Name)
	}
	if t.Elem == nil || t.Elem.Kind == KindUnknown {
		return v, fmt.Errorf("%s points to %s, which has no type to show", v.Name, typeName(t.Elem))
	}
	addr, err := p.pointerValue(v)
	if err != nil {
		return v, err
	}
	return Var{Name: "*" + v.Name, Addr: addr, Size: uint64(max(t.Elem.Size, 0)), Type: t.Elem, Module: v.Module}, nil
}

func typeName(t *Type) string {
	if t == nil || t.Name == "" {
		return "void"
	}
	return t.Name
}

// addressOf is &v.
func addressOf(v Var) (Var, error) {
	if v.Value != nil {
		return v, fmt.Errorf("%s has no address (it is in a register, or a value)", v.Name)
	}
	elem := v.Type
	if elem == nil {
		elem = &Type{Kind: KindUnknown, Name: "void"}
	}
	pt := &Type{Kind: KindPointer, Size: 8, Elem: elem, Name: ptrName(elem)}
	return Var{Name: "&" + v.Name, Type: pt, Size: 8, Module: v.Module, Value: le.AppendUint64(nil, v.Addr)}, nil
}

// field is v.name, following v first if it points to a struct.
func (p *parser) field(v Var, name string) (Var, error) {
	if v.Type != nil && v.Type.Kind == KindPointer && v.Type.Elem != nil && v.Type.Elem.Kind == KindStruct {
		var err error
		if v, err = p.deref(v); err != nil {
			return v, err
		}
	}
	t := v.Type
	if t == nil || t.Kind != KindStruct {
		return v, fmt.Errorf("%s is not a struct, so it has no field %s", v.Name, name)
	}
	for _, f := range t.Fields {
		if f.Name != name {
			continue
		}
		if f.BitSize > 0 {
			return p.bits(v, f)
		}
		out := Var{Name: v.Name + "." + name, Addr: v.Addr + uint64(f.Off), Type: f.Type, Module: v.Module}
		if f.Type != nil {
			out.Size = uint64(max(f.Type.Size, 0))
		}
		if v.Value != nil {
			end := f.Off + int64(out.Size)
			if end > int64(len(v.Value)) {
				return v, fmt.Errorf("%s.%s lies outside the value", v.Name, name)
			}
			out.Value = v.Value[f.Off:end]
		}
		return out, nil
	}
	return v, fmt.Errorf("%s (%s) has no field %s", v.Name, t.Name, name)
}

// index is v[n] of an array, a pointer, or a Go slice.
func (p *parser) index(v Var, n int64) (Var, error) {
	t := v.Type
	name := fmt.Sprintf("%s[%d]", v.Name, n)
	var base uint64
	switch {
	case t != nil && t.Kind == KindArray && v.Value == nil:
		if t.Len >= 0 && (n < 0 || n >= t.Len) {
			return v, fmt.Errorf("index %d is outside %s, of %d elements", n, v.Name, t.Len)
		}
		base = v.Addr
	case t != nil && t.Kind == KindPointer:
		var err error
		if base, err = p.pointerValue(v); err != nil {
			return v, err
		}
	case t != nil && t.Kind == KindStruct && strings.HasPrefix(t.Name, "[]"):
		arr, err := p.field(v, "array")
		if err != nil {
			return v, err
		}
		l, err := p.field(v, "len")
		if err != nil {
			return v, err
		}
		length, err := p.pointerValue(l)
		if err != nil {
			return v, err
		}
		if n < 0 || uint64(n) >= length {
			return v, fmt.Errorf("index %d is outside %s, of length %d", n, v.Name, length)
		}
		return p.index(arr, n)
	default:
		return v, fmt.Errorf("%s is not an array, a pointer or a slice", v.Name)
	}
	elem := t.Elem
	if elem == nil || elem.Size <= 0 {
		return v, fmt.Errorf("the elements of %s have no known size", v.Name)
	}
	return Var{Name: name, Addr: base + uint64(n*elem.Size), Size: uint64(elem.Size), Type: elem, Module: v.Module}, nil
}

// bits is bit-field f of v: a value of its type, which has no address.
func (p *parser) bits(v Var, f Field) (Var, error) {
	name := v.Name + "." + f.Name
	n := (f.BitOff + f.BitSize + 7) / 8
	if f.Type == nil || f.Type.Size <= 0 || f.Type.Size > 8 || f.BitOff+f.BitSize > 64 {
		return v, fmt.Errorf("%s is a bit-field hermit cannot read: print %s to see it", name, v.Name)
	}
	var b []byte
	if v.Value != nil {
		if f.Off+n > int64(len(v.Value)) {
			return v, fmt.Errorf("%s lies outside the value", name)
		}
		b = v.Value[f.Off : f.Off+n]
	} else {
		var err error
		if b, err = readFull(p.mem, v.Addr+uint64(f.Off), int(n)); err != nil {
			return v, fmt.Errorf("cannot access memory at address %#x", v.Addr+uint64(f.Off))
		}
	}
	var u uint64
	for i, c := range b {
		u |= uint64(c) << (8 * i)
	}
	u = (u >> uint(f.BitOff)) & (1<<uint(f.BitSize) - 1)
	if f.Type.Kind == KindInt || f.Type.Kind == KindEnum {
		shift := 64 - uint(f.BitSize)
		u = uint64(int64(u<<shift) >> shift)
	}
	return Var{Name: name, Type: f.Type, Size: uint64(f.Type.Size), Module: v.Module, Value: le.AppendUint64(nil, u)[:f.Type.Size]}, nil
}

// AddressValue is the address v stands for, as gdb's x takes it: where an
// array or a function is (or a variable without type), a pointer's or an
// integer's value.
func AddressValue(v Var, mem Mem) (uint64, error) {
	t := v.Type
	switch {
	case t == nil || t.Kind == KindFunc || t.Kind == KindArray:
		if v.Value != nil {
			return 0, fmt.Errorf("%s has no address", v.Name)
		}
		return v.Addr, nil
	case t.Kind == KindStruct || t.Kind == KindFloat || t.Kind == KindUnknown:
		return 0, fmt.Errorf("%s (%s) is not an address: x &%s shows its memory", v.Name, typeName(t), v.Name)
	}
	b := v.Value
	if b == nil {
		var err error
		if b, err = readFull(mem, v.Addr, int(min(max(t.Size, 1), 8))); err != nil {
			return 0, fmt.Errorf("cannot access memory at address %#x", v.Addr)
		}
	}
	var a [8]byte
	copy(a[:], b)
	return le.Uint64(a[:]), nil
}
