package gdbstub

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// What lldb-server adds to a stop reply and lldb shows in its stop line:
// the thread's name ("thread #1, name = 'crash'") and, for a fault, what
// the kernel's si_code says of it ("signal SIGSEGV: address not mapped to
// object (fault address: 0x10)"). gdb reads neither: it asks
// qXfer:threads for names and shows $_siginfo itself.

// appendLLDBStopKeys appends the name and description keys of thread
// tid's stop to b.
func (s *session) appendLLDBStopKeys(b []byte, st Stop, tid int) []byte {
	if name := s.threadName(tid); name != "" {
		if strings.ContainsAny(name, "$#+-;:*}") {
			b = fmt.Appendf(b, "hexname:%s;", hex.EncodeToString([]byte(name)))
		} else {
			b = fmt.Appendf(b, "name:%s;", name)
		}
	}
	if st.Kind == StopSignal && st.Tid == tid {
		if info, err := s.t.Siginfo(tid); err == nil {
			if d := faultDescription(info); d != "" {
				b = fmt.Appendf(b, "description:%s;", hex.EncodeToString([]byte(d)))
			}
		}
	}
	return b
}

// threadName is thread tid's comm, or "" when the target does not know it.
func (s *session) threadName(tid int) string {
	ths, err := s.t.Threads()
	if err != nil {
		return ""
	}
	for _, th := range ths {
		if th.ID == tid {
			return th.Name
		}
	}
	return ""
}

// faultCodes names the si_code values the kernel gives its own faults
// (asm-generic/siginfo.h), in lldb's words, by Linux signal number.
var faultCodes = map[int32][]string{
	4: {"", "illegal opcode", "illegal operand", "illegal addressing mode",
		"illegal trap", "privileged opcode", "privileged register",
		"coprocessor error", "internal stack error"}, // SIGILL
	7: {"", "illegal alignment", "illegal address", "hardware error"}, // SIGBUS
	8: {"", "integer divide by zero", "integer overflow",
		"floating point divide by zero", "floating point overflow",
		"floating point underflow", "floating point inexact result",
		"floating point invalid operation", "subscript out of range"}, // SIGFPE
	11: {"", "address not mapped to object",
		"invalid permissions for mapped object",
		"failed address bounds checks", "failed protection key checks"}, // SIGSEGV
}

var faultSignalNames = map[int32]string{4: "SIGILL", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV"}

const siKernel = 0x80 // SI_KERNEL: a general protection fault, for one

// faultDescription describes a fault the kernel raised, from its raw
// siginfo_t; "" for a signal a process sent, or one it does not know.
func faultDescription(info []byte) string {
	if len(info) < 24 {
		return ""
	}
	signo := int32(binary.LittleEndian.Uint32(info[0:]))
	code := int32(binary.LittleEndian.Uint32(info[8:]))
	addr := binary.LittleEndian.Uint64(info[16:])
	name, ok := faultSignalNames[signo]
	if !ok {
		return ""
	}
	codes := faultCodes[signo]
	var what string
	switch {
	case code > 0 && int(code) < len(codes):
		what = codes[code]
	case code == siKernel && signo == 11:
		// The kernel does not say which address: a non-canonical one,
		// or a privileged instruction's.
		return "signal SIGSEGV: general protection fault"
	default:
		return ""
	}
	if signo == 11 {
		return fmt.Sprintf("signal %s: %s (fault address: %#x)", name, what, addr)
	}
	return fmt.Sprintf("signal %s: %s", name, what)
}
