// Package strace formats x86-64 Linux syscalls, their results and signals
// as strace prints them, for hermit's REPL and trace tools:
//
//	openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3
//	read(3, "root:x:0:0:root:/root:/bin/bash\n"..., 4096) = 1024
//	--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x0} ---
//
// The mechanism is a table keyed by syscall number (table_*.go) that gives
// each argument a kind: a descriptor, a path to read from the tracee, a
// flag word, a struct to decode, and so on. Formatting reads the tracee's
// memory only through a caller-supplied Mem, so the package works on live
// processes and on recorded traces alike; it is pure, uses no operating
// system interfaces, and never panics on what the tracee hands it. Memory
// that cannot be read prints as the pointer in hex, every read is capped
// (maxRead bytes, maxArray elements), and the output is valid UTF-8 and
// deterministic.
package strace

import (
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Mem reads the traced process's memory at addr into b. At unmapped memory
// it may return fewer than len(b) bytes together with an error.
type Mem func(addr uint64, b []byte) (int, error)

// Call is one syscall as a stop shows it.
type Call struct {
	Nr   int
	Args [6]uint64
	// Done says Result is known (the call returned). A call that has not
	// returned prints "= ?", or nothing after the call with
	// Options.NoPending.
	Done   bool
	Result int64 // raw: -errno on failure
}

// Options tune the formatting. The zero value is strace's default.
type Options struct {
	// MaxString is how many bytes of a string or buffer to show before
	// the rest is elided as `"..."...`; 0 means 32, and it is capped at
	// 4096. Paths are shown whole (up to 4096 bytes).
	MaxString int
	// Out says mem shows the process after the call returned, so the
	// call's out-arguments (read's and recv's buffers, stat's struct,
	// pipe's descriptors) are decoded. Without it, and for calls that
	// have not returned or that failed, they print as pointers.
	Out bool
	// NoPending drops the " = ?" after a call that has not returned.
	NoPending bool
}

const (
	// maxRead caps every single read of tracee memory.
	maxRead = 4096
	// maxArray caps the elements shown of an array (poll fds, iovecs,
	// argv); the rest print as "...".
	maxArray = 32
	// defaultMaxString is strace's default -s.
	defaultMaxString = 32
)

// Format returns the whole strace line for c: "name(args) = result".
func Format(c Call, mem Mem, opt Options) string {
	s := name(c.Nr) + "(" + FormatArgs(c, mem, opt) + ")"
	if !c.Done && opt.NoPending {
		return s
	}
	return s + " = " + FormatResult(c)
}

// FormatArgs returns c's arguments as strace shows them between the
// parentheses, decoding strings and structs from mem (which may be nil).
func FormatArgs(c Call, mem Mem, opt Options) string {
	f := newFmtr(c, mem, opt)
	return strings.Join(f.args(), ", ")
}

// FormatResult returns what follows "= " in c's line: "3",
// "-1 ENOENT (No such file or directory)", "0x7ffff7fc0000" for calls that
// return addresses, "? ERESTARTSYS (To be restarted if SA_RESTART is set)"
// for an interrupted call, and "?" when the call has not returned.
func FormatResult(c Call) string {
	d, known := syscallTable()[c.Nr]
	if !c.Done || (known && d.ret == rNone) {
		return "?"
	}
	r := c.Result
	if e := -r; e > 0 && e < 4096 {
		name, text := Errno(int(e))
		prefix := "-1 "
		if isRestart(int(e)) {
			prefix = "? "
		}
		if name == "" {
			name = "ERRNO_" + strconv.FormatInt(e, 10)
		}
		return prefix + name + " (" + text + ")"
	}
	switch {
	case !known:
		return strconv.FormatInt(r, 10)
	case d.ret == rHex:
		return hex(uint64(r))
	case d.ret == rOct:
		return "0" + strconv.FormatUint(uint64(r), 8)
	case d.ret == rFcntl:
		return fcntlResult(c)
	case d.ret == rSignal:
		if n, ok := signalName(int(r)); ok && r > 0 {
			return itoa(r) + " (" + n + ")"
		}
	}
	return strconv.FormatInt(r, 10)
}

// name is the kernel's name for syscall nr, or syscall_NNN.
func name(nr int) string {
	return abi.SyscallName(nr)
}

// fmtr formats one call.
type fmtr struct {
	c   Call
	mem Mem
	opt Options
	max int // bytes of a string to show
}

func newFmtr(c Call, mem Mem, opt Options) *fmtr {
	m := opt.MaxString
	if m <= 0 {
		m = defaultMaxString
	}
	if m > maxRead {
		m = maxRead
	}
	return &fmtr{c: c, mem: mem, opt: opt, max: m}
}

// args formats all arguments of the call.
func (f *fmtr) args() []string {
	d, ok := syscallTable()[f.c.Nr]
	if !ok {
		out := make([]string, 6)
		for i, a := range f.c.Args {
			out[i] = hex(a)
		}
		return out
	}
	if d.fn != nil {
		return d.fn(f)
	}
	out := make([]string, 0, len(d.args))
	for i, k := range d.args {
		if s, keep := f.arg(i, k); keep {
			out = append(out, s)
		}
	}
	return out
}

// ok says the call returned successfully.
func (f *fmtr) ok() bool {
	return f.c.Done && (f.c.Result >= 0 || f.c.Result < -4095)
}

// out says out-arguments can be decoded: the call returned successfully
// and mem shows the process after it.
func (f *fmtr) out() bool {
	return f.opt.Out && f.ok()
}

// result is the call's result as a count of bytes or elements, capped.
func (f *fmtr) result() int {
	r := f.c.Result
	if r < 0 {
		return 0
	}
	if r > 1<<30 {
		return 1 << 30
	}
	return int(r)
}

// readSome reads up to n bytes at addr (n is capped at maxRead) and
// returns what was readable.
func (f *fmtr) readSome(addr uint64, n int) []byte {
	if f.mem == nil || n <= 0 || addr == 0 {
		return nil
	}
	if n > maxRead {
		n = maxRead
	}
	if end := addr + uint64(n); end < addr {
		n = int(-addr) // stop at the top of the address space
		if n == 0 {
			return nil
		}
	}
	b := make([]byte, n)
	got, _ := f.mem(addr, b)
	if got < 0 {
		got = 0
	}
	if got > n {
		got = n
	}
	return b[:got]
}

// read reads exactly n bytes at addr, or reports false.
func (f *fmtr) read(addr uint64, n int) ([]byte, bool) {
	if n > maxRead {
		return nil, false
	}
	b := f.readSome(addr, n)
	if len(b) != n || n == 0 {
		return nil, false
	}
	return b, true
}

func (f *fmtr) u64(addr uint64) (uint64, bool) {
	b, ok := f.read(addr, 8)
	if !ok {
		return 0, false
	}
	return le64(b), true
}

func (f *fmtr) u32(addr uint64) (uint32, bool) {
	b, ok := f.read(addr, 4)
	if !ok {
		return 0, false
	}
	return le32(b), true
}

// cstring reads a NUL-terminated string of at most max bytes at addr. more
// says the string goes on past max; ok is false when no terminator (and
// fewer than max bytes) could be read.
func (f *fmtr) cstring(addr uint64, max int) (s []byte, more, ok bool) {
	if f.mem == nil || addr == 0 {
		return nil, false, false
	}
	var buf []byte
	for len(buf) <= max {
		// Read up to the end of the page, so a string that ends just
		// before unmapped memory still reads.
		n := int(4096 - addr%4096)
		if n > 256 {
			n = 256
		}
		if rest := max + 1 - len(buf); n > rest {
			n = rest
		}
		b := f.readSome(addr, n)
		for i, c := range b {
			if c == 0 {
				return append(buf, b[:i]...), false, true
			}
		}
		buf = append(buf, b...)
		if len(b) < n {
			return nil, false, false
		}
		addr += uint64(n)
		if addr < uint64(n) {
			return nil, false, false // wrapped
		}
	}
	return buf[:max], true, true
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// hex is v in hex with 0x, or "0".
func hex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

// ptr is a pointer: NULL or hex.
func ptr(v uint64) string {
	if v == 0 {
		return "NULL"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

func itoa(v int64) string  { return strconv.FormatInt(v, 10) }
func utoa(v uint64) string { return strconv.FormatUint(v, 10) }

// quote escapes b as strace does: printable ASCII as is, \t \n \v \f \r
// \" \\ escaped, everything else in octal (three digits when an octal
// digit follows). more appends the "..." that says the data goes on. With
// hexMode every byte is \xNN instead.
func quote(b []byte, more, hexMode bool) string {
	var sb strings.Builder
	sb.Grow(len(b) + 2)
	sb.WriteByte('"')
	const digits = "0123456789abcdef"
	for i, c := range b {
		if hexMode {
			sb.WriteString(`\x`)
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&15])
			continue
		}
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		case '\v':
			sb.WriteString(`\v`)
		case '\f':
			sb.WriteString(`\f`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if c >= ' ' && c <= '~' {
				sb.WriteByte(c)
				continue
			}
			sb.WriteByte('\\')
			if i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7' {
				sb.WriteByte('0' + c>>6)
				sb.WriteByte('0' + c>>3&7)
				sb.WriteByte('0' + c&7)
				continue
			}
			if c >= 0o100 {
				sb.WriteByte('0' + c>>6)
			}
			if c >= 0o10 {
				sb.WriteByte('0' + c>>3&7)
			}
			sb.WriteByte('0' + c&7)
		}
	}
	sb.WriteByte('"')
	if more {
		sb.WriteString("...")
	}
	return sb.String()
}

// buf formats n bytes at addr, abbreviated to f.max.
func (f *fmtr) buf(addr uint64, n uint64, hexMode bool) string {
	if addr == 0 {
		return "NULL"
	}
	show := uint64(f.max)
	more := n > show
	if !more {
		show = n
	}
	b, ok := f.read(addr, int(show))
	if show == 0 {
		// An empty buffer needs no memory.
		b, ok = nil, true
	}
	if !ok {
		return ptr(addr)
	}
	return quote(b, more, hexMode)
}

// str formats a NUL-terminated string at addr, abbreviated to max.
func (f *fmtr) str(addr uint64, max int) string {
	if addr == 0 {
		return "NULL"
	}
	s, more, ok := f.cstring(addr, max)
	if !ok {
		return ptr(addr)
	}
	return quote(s, more, false)
}

// path formats a path: a string shown whole up to PATH_MAX.
func (f *fmtr) path(addr uint64) string {
	return f.str(addr, abi.MaxPath)
}
