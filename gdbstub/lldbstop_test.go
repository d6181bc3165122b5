package gdbstub

import (
	"encoding/binary"
	"testing"
)

func TestFaultDescription(t *testing.T) {
	for _, tc := range []struct {
		signo, code int32
		addr        uint64
		want        string
	}{
		{11, 1, 0x10, "signal SIGSEGV: address not mapped to object (fault address: 0x10)"},
		{11, 2, 0x401000, "signal SIGSEGV: invalid permissions for mapped object (fault address: 0x401000)"},
		{11, siKernel, 0, "signal SIGSEGV: general protection fault"},
		{8, 1, 0x401000, "signal SIGFPE: integer divide by zero"},
		{7, 2, 0x7f0000000000, "signal SIGBUS: illegal address"},
		{4, 2, 0x401000, "signal SIGILL: illegal operand"},
		{11, 0, 0, ""},  // kill(pid, SIGSEGV): SI_USER
		{11, -6, 0, ""}, // tkill: SI_TKILL
		{11, 9, 0, ""},  // a code the table does not know
		{10, 1, 0, ""},  // SIGUSR1 is no fault
	} {
		info := make([]byte, 128)
		binary.LittleEndian.PutUint32(info[0:], uint32(tc.signo))
		binary.LittleEndian.PutUint32(info[8:], uint32(tc.code))
		binary.LittleEndian.PutUint64(info[16:], tc.addr)
		if got := faultDescription(info); got != tc.want {
			t.Errorf("signal %d, si_code %d: got %q, want %q", tc.signo, tc.code, got, tc.want)
		}
	}
	if got := faultDescription(nil); got != "" {
		t.Errorf("no siginfo: got %q", got)
	}
}
