package debuginfo

import (
	"debug/dwarf"
	"fmt"
	"math"
	"strings"
)

// quoteChar quotes c as gdb does: 'a', '\n', '\000', '\310'.
func quoteChar(c byte) string {
	return "'" + escapeByte(c, '\'') + "'"
}

// quoteString quotes b as gdb does, with "..." after it when truncated.
func quoteString(b []byte, truncated bool) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		sb.WriteString(escapeByte(c, '"'))
	}
	sb.WriteByte('"')
	if truncated {
		sb.WriteString("...")
	}
	return sb.String()
}

// escapeByte escapes one byte inside a quote of kind q.
func escapeByte(c byte, q byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	case '\\':
		return `\\`
	case q:
		return `\` + string(q)
	}
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf(`\%03o`, c)
	}
	return string(c)
}

// formatFloat prints a float of size 4 or 8 with gdb's %g precision
// (9 and 17 digits), and x87 extended precision (10 or 16 bytes) with 18.
func formatFloat(b []byte, size int64) string {
	var f float64
	digits := 17
	switch size {
	case 4:
		f, digits = float64(math.Float32frombits(le.Uint32(b))), 9
	case 8:
		f = math.Float64frombits(le.Uint64(b))
	case 10, 16:
		mant := le.Uint64(b)
		se := le.Uint16(b[8:])
		exp := int(se & 0x7fff)
		switch {
		case exp == 0x7fff && mant<<1 == 0:
			f = math.Inf(1)
		case exp == 0x7fff:
			f = math.NaN()
		default:
			f = math.Ldexp(float64(mant), exp-16383-63)
		}
		if se&0x8000 != 0 {
			f = -f
		}
		digits = 18
	default:
		return fmt.Sprintf("<float of %d bytes>", size)
	}
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan(0x" + fmt.Sprintf("%x", math.Float64bits(f)&(1<<52-1)) + ")"
		}
		return "nan(0x" + fmt.Sprintf("%x", math.Float64bits(f)&(1<<52-1)) + ")"
	}
	return fmt.Sprintf("%.*g", digits, f)
}

// funcSignature returns a C-style signature of the subprogram at off, as gdb
// shows a function's type: "int (int, char **)".
func (m *module) funcSignature(off dwarf.Offset) string {
	sig := "void ("
	err := guard(func() {
		r := m.dw.Reader()
		r.Seek(off)
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if t, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
			if rt := m.convertType(t); rt != nil {
				sig = rt.Name + " ("
			}
		}
		proto, _ := e.Val(dwarf.AttrPrototyped).(bool)
		var params []string
		if e.Children {
			for i := 0; i < maxFields; i++ {
				c, err := r.Next()
				if err != nil || c == nil || c.Tag == 0 {
					break
				}
				switch c.Tag {
				case dwarf.TagFormalParameter:
					name := "?"
					if t, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
						if pt := m.convertType(t); pt != nil {
							name = pt.Name
						}
					}
					params = append(params, name)
				case dwarf.TagUnspecifiedParameters:
					params = append(params, "...")
				}
				if c.Children {
					r.SkipChildren()
				}
			}
		}
		if len(params) == 0 && proto {
			params = []string{"void"}
		}
		sig += strings.Join(params, ", ")
	})
	if err != nil {
		return "function"
	}
	return sig + ")"
}
