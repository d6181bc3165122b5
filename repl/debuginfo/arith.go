package debuginfo

import (
	"fmt"
	"strconv"
	"strings"
)

// Integer arithmetic, comparisons and logic in expressions, as a
// breakpoint's condition takes them (i == 10 && p->n > 2): C's operators
// and precedence, on the integer values of variables (integers, chars,
// bools, enums, pointers) and of decimal, hex or octal numbers. A result
// is a value of type long (unsigned long when an operand is an unsigned
// 8-byte one); a comparison's or a logical operator's is an int, 0 or 1.

// binaryLevels are the binary operators, loosest first.
var binaryLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"},
	{"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"},
	{"+", "-"}, {"*", "/", "%"},
}

// twoCharOps are the operators of two characters the tokenizer reads as
// one token.
var twoCharOps = []string{"||", "&&", "==", "!=", "<=", ">=", "<<", ">>"}

// binary parses the operators of binaryLevels[level] and tighter.
func (p *parser) binary(level int) (Var, error) {
	if level == len(binaryLevels) {
		return p.unary()
	}
	v, err := p.binary(level + 1)
	for err == nil && contains(binaryLevels[level], p.tok) {
		op := p.tok
		p.next()
		var w Var
		if w, err = p.binary(level + 1); err != nil {
			break
		}
		v, err = p.apply(op, v, w)
	}
	return v, err
}

func contains(ops []string, tok string) bool {
	for _, o := range ops {
		if o == tok {
			return true
		}
	}
	return false
}

// The types of the values arithmetic makes.
var (
	typeInt   = &Type{Kind: KindInt, Name: "int", Size: 4}
	typeLong  = &Type{Kind: KindInt, Name: "long", Size: 8}
	typeULong = &Type{Kind: KindUint, Name: "unsigned long", Size: 8}
)

// valueOf makes a value of type t.
func valueOf(t *Type, u uint64) Var {
	return Var{Name: strconv.FormatUint(u, 10), Type: t, Size: uint64(t.Size), Value: le.AppendUint64(nil, u)[:t.Size]}
}

// intOf reads v as an integer; unsigned says C would compare it so (an
// unsigned 8-byte integer or a pointer).
func (p *parser) intOf(v Var) (u uint64, uns bool, err error) {
	t := v.Type
	if t == nil {
		return 0, false, fmt.Errorf("%s has no type: it is not a number", v.Name)
	}
	switch t.Kind {
	case KindInt, KindUint, KindChar, KindBool, KindEnum, KindPointer:
	default:
		return 0, false, fmt.Errorf("%s (%s) is not an integer", v.Name, typeName(t))
	}
	size := min(max(t.Size, 1), 8)
	b := v.Value
	if b == nil {
		if b, err = readFull(p.mem, v.Addr, int(size)); err != nil {
			return 0, false, fmt.Errorf("cannot access memory at address %#x", v.Addr)
		}
	}
	signed := t.Kind == KindInt || t.Kind == KindEnum || t.Kind == KindChar && !strings.HasPrefix(t.Name, "unsigned")
	if signed {
		return uint64(signExtend(b, size)), false, nil
	}
	return unsigned(b, size), size == 8, nil
}

// apply computes v op w.
func (p *parser) apply(op string, v, w Var) (Var, error) {
	a, ua, err := p.intOf(v)
	if err != nil {
		return Var{}, err
	}
	b, ub, err := p.intOf(w)
	if err != nil {
		return Var{}, err
	}
	uns := ua || ub
	less := func(x, y uint64) bool {
		if uns {
			return x < y
		}
		return int64(x) < int64(y)
	}
	truth := func(c bool) (Var, error) {
		if c {
			return valueOf(typeInt, 1), nil
		}
		return valueOf(typeInt, 0), nil
	}
	var r uint64
	switch op {
	case "||":
		return truth(a != 0 || b != 0)
	case "&&":
		return truth(a != 0 && b != 0)
	case "==":
		return truth(a == b)
	case "!=":
		return truth(a != b)
	case "<":
		return truth(less(a, b))
	case "<=":
		return truth(!less(b, a))
	case ">":
		return truth(less(b, a))
	case ">=":
		return truth(!less(a, b))
	case "|":
		r = a | b
	case "^":
		r = a ^ b
	case "&":
		r = a & b
	case "<<":
		r = a << (b & 63)
	case ">>":
		if ua {
			r = a >> (b & 63)
		} else {
			r = uint64(int64(a) >> (b & 63))
		}
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/", "%":
		if b == 0 {
			return Var{}, fmt.Errorf("division by zero")
		}
		switch {
		case uns && op == "/":
			r = a / b
		case uns:
			r = a % b
		case op == "/":
			r = uint64(int64(a) / int64(b))
		default:
			r = uint64(int64(a) % int64(b))
		}
	}
	if uns {
		return valueOf(typeULong, r), nil
	}
	return valueOf(typeLong, r), nil
}

// negate is -v, !v or ~v.
func (p *parser) negate(op string, v Var) (Var, error) {
	a, ua, err := p.intOf(v)
	if err != nil {
		return Var{}, err
	}
	switch op {
	case "!":
		if a == 0 {
			return valueOf(typeInt, 1), nil
		}
		return valueOf(typeInt, 0), nil
	case "-":
		a = -a
	default:
		a = ^a
	}
	if ua {
		return valueOf(typeULong, a), nil
	}
	return valueOf(typeLong, a), nil
}

// number is an integer literal: decimal, 0x hex or 0 octal, with C's u
// and l suffixes allowed.
func number(tok string) (Var, error) {
	s := strings.TrimRight(strings.ToLower(tok), "ul")
	u, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return Var{}, fmt.Errorf("%w: %q is not a number", errSyntax, tok)
	}
	if int64(u) < 0 || strings.ContainsAny(strings.ToLower(tok), "u") {
		return valueOf(typeULong, u), nil
	}
	return valueOf(typeLong, u), nil
}

// Truth says whether v, an integer, is nonzero: whether a condition
// holds.
func Truth(v Var, mem Mem) (bool, error) {
	p := &parser{mem: mem}
	u, _, err := p.intOf(v)
	return u != 0, err
}
