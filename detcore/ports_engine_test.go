package detcore_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// sockFake is the scripted tracer plus a small kernel for socket calls: it
// plays the calls the engine lets run (at their seccomp stop, as the
// kernel would) on sockets whose addresses it keeps, and answers the
// engine's SocketName from them.
type sockFake struct {
	*detcoretest.Tracer
	t      *testing.T
	proto  map[int]int    // fd → protocol
	local  map[int][]byte // fd → bound address
	peer   map[int][]byte
	choose map[int]uint16 // fd → the port the kernel picks for it
	// accepted and received are the peers accept and recvfrom return.
	accepted, received []byte
	fsids              []uint64
	// saw lists the destination port of every connect and sendto, as the
	// kernel saw it; calls lists "name:exit" for each call resumed to its
	// exit stop and "name" for the others.
	saw   []uint16
	calls []string
}

func (f *sockFake) SocketName(tid, fd int, peer bool) (int, []byte, error) {
	m := f.local
	if peer {
		m = f.peer
	}
	if f.proto[fd] == 0 {
		return 0, nil, detcore.Errno(abi.EBADF)
	}
	if b, ok := m[fd]; ok {
		return f.proto[fd], b, nil
	}
	if f.proto[fd] < 0 { // AF_UNIX
		return 0, []byte{1, 0}, nil
	}
	if peer {
		return 0, nil, detcore.Errno(107) // ENOTCONN
	}
	return f.proto[fd], sin(0, 0, 0, 0, 0), nil
}

func (f *sockFake) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	var r abi.Regs
	if f.Tracer.GetRegs(tid, &r) == nil && int64(r.Rax) == -abi.ENOSYS && int64(r.OrigRax) >= 0 {
		name := abi.SyscallName(int(r.OrigRax))
		if mode == detcore.ResumeSyscall {
			name += ":exit"
		}
		f.calls = append(f.calls, name)
		f.kernel(tid, &r)
	}
	return f.Tracer.Resume(tid, mode, sig)
}

func (f *sockFake) read(tid int, addr uint64, n int) []byte {
	b := make([]byte, n)
	if err := f.Tracer.ReadMem(tid, addr, b); err != nil {
		f.t.Fatalf("kernel: %v", err)
	}
	return b
}

// name writes address a to a guest buffer with its length at lenp, as
// getsockname does.
func (f *sockFake) name(tid int, addr, lenp uint64, a []byte) {
	_ = f.Tracer.WriteMem(tid, addr, a)
	_ = f.Tracer.WriteMem(tid, lenp, binary.LittleEndian.AppendUint32(nil, uint32(len(a))))
}

// autobind gives socket fd the port the kernel picks for it, on address ip.
func (f *sockFake) autobind(fd int, ip [4]byte) {
	if _, ok := f.local[fd]; !ok {
		f.local[fd] = sin(ip[0], ip[1], ip[2], ip[3], f.choose[fd])
	}
}

func (f *sockFake) kernel(tid int, r *abi.Regs) {
	fd := int(int32(r.Rdi))
	switch int(r.OrigRax) {
	case abi.SYS_BIND:
		a := f.read(tid, r.Rsi, int(r.Rdx))
		if port := binary.BigEndian.Uint16(a[2:]); port == 0 {
			f.autobind(fd, [4]byte(a[4:8]))
		} else {
			f.local[fd] = a
		}
	case abi.SYS_CONNECT:
		a := f.read(tid, r.Rsi, int(r.Rdx))
		f.saw = append(f.saw, binary.BigEndian.Uint16(a[2:]))
		f.autobind(fd, [4]byte{127, 0, 0, 1})
		if a[4] != 127 {
			f.local[fd] = sin(10, 0, 0, 2, f.choose[fd])
		}
		f.peer[fd] = a
	case abi.SYS_SENDTO:
		a := f.read(tid, r.R8, int(r.R9))
		f.saw = append(f.saw, binary.BigEndian.Uint16(a[2:]))
		f.autobind(fd, [4]byte{127, 0, 0, 1})
	case abi.SYS_GETSOCKNAME, abi.SYS_GETPEERNAME:
		_, a, _ := f.SocketName(tid, fd, r.OrigRax == abi.SYS_GETPEERNAME)
		f.name(tid, r.Rsi, r.Rdx, a)
	case abi.SYS_ACCEPT:
		f.name(tid, r.Rsi, r.Rdx, f.accepted)
	case abi.SYS_RECVFROM:
		if r.R8 != 0 {
			f.name(tid, r.R8, r.R9, f.received)
		}
	case abi.SYS_STATFS:
		_ = f.Tracer.WriteMem(tid, r.Rsi+56, binary.LittleEndian.AppendUint64(nil, f.fsids[0]))
		f.fsids = f.fsids[1:]
	}
}

// sin is a struct sockaddr_in.
func sin(a, b, c, d byte, port uint16) []byte {
	s := make([]byte, 16)
	s[0] = 2
	binary.BigEndian.PutUint16(s[2:], port)
	copy(s[4:], []byte{a, b, c, d})
	return s
}

// Guest memory: the addresses the script passes in, and an output
// buffer and length for each call that returns an address.
const (
	inBase  = 0x10000 // 16 bytes each
	outBase = 0x20000 // 32 bytes each, the length at +28
	statBuf = 0x30000
	dataBuf = 0x31000
)

func in(i int) uint64  { return inBase + 16*uint64(i) }
func out(i int) uint64 { return outBase + 32*uint64(i) }

// TestPortsEngine runs a guest that makes a listener, a client of it, a
// client of an outside server, an explicit binding and a UDP pair, and
// checks what the guest reads, what the kernel sees and which calls got
// an exit stop.
func TestPortsEngine(t *testing.T) {
	s := detcoretest.Syscall
	const (
		listener, client, outside, explicit, udpServer, udpClient, unixSock = 3, 4, 5, 6, 7, 8, 9
	)
	sock := func(nr, fd int, i int, rest ...uint64) detcoretest.Step {
		return s(nr, append([]uint64{uint64(fd), in(i), 16}, rest...)...)
	}
	name := func(nr, fd, i int) detcoretest.Step { return s(nr, uint64(fd), out(i), out(i)+28) }
	const v0 = detcore.VirtualPortBase
	ins := [][]byte{
		sin(127, 0, 0, 1, 0),        // 0: the listener's address
		sin(127, 0, 0, 1, v0),       // 1: the listener as the guest knows it
		sin(93, 184, 216, 34, 443),  // 2: an outside server
		sin(0, 0, 0, 0, 8080),       // 3: an explicit port
		sin(127, 0, 0, 1, 0),        // 4: the UDP server's address
		sin(127, 0, 0, 1, v0),       // 5: the UDP server as the guest knows it
		sin(93, 184, 216, 34, v0+1), // 6: an outside UDP peer on a port that is virtual here
	}
	tr := detcoretest.New(
		sock(abi.SYS_BIND, listener, 0),
		name(abi.SYS_GETSOCKNAME, listener, 0),
		sock(abi.SYS_CONNECT, client, 1),
		name(abi.SYS_ACCEPT, listener, 1),
		name(abi.SYS_GETSOCKNAME, client, 2),
		name(abi.SYS_GETPEERNAME, client, 3),
		sock(abi.SYS_CONNECT, outside, 2),
		name(abi.SYS_GETPEERNAME, outside, 4),
		name(abi.SYS_GETSOCKNAME, outside, 5),
		sock(abi.SYS_BIND, explicit, 3),
		name(abi.SYS_GETSOCKNAME, explicit, 6),
		sock(abi.SYS_BIND, udpServer, 4),
		s(abi.SYS_SENDTO, udpClient, dataBuf, 1, 0, in(5), 16),
		s(abi.SYS_RECVFROM, udpServer, dataBuf, 1, 0, out(7), out(7)+28),
		s(abi.SYS_SENDTO, udpServer, dataBuf, 1, 0, in(6), 16),
		s(abi.SYS_RECVFROM, udpServer, dataBuf, 1, 0, 0, 0),
		name(abi.SYS_GETSOCKNAME, unixSock, 8),
		s(abi.SYS_STATFS, dataBuf, statBuf),
		s(abi.SYS_STATFS, dataBuf, statBuf+128),
		s(abi.SYS_STATFS, dataBuf, statBuf+256),
		detcoretest.ExitGroup(0),
	)
	for i, b := range ins {
		_ = tr.WriteMem(1, in(i), b)
	}
	for i := range 9 {
		_ = tr.WriteMem(1, out(i), make([]byte, 28))
		tr.SetWord(out(i)+28, 28)
	}
	_ = tr.WriteMem(1, statBuf, make([]byte, 3*128))
	_ = tr.WriteMem(1, dataBuf, make([]byte, 16))
	f := &sockFake{
		Tracer: tr, t: t,
		proto: map[int]int{listener: 6, client: 6, outside: 6, explicit: 6, udpServer: 17, udpClient: 17, unixSock: -1},
		local: map[int][]byte{}, peer: map[int][]byte{},
		choose:   map[int]uint16{listener: 51000, client: 52000, outside: 53000, udpServer: 55000, udpClient: 54000},
		accepted: sin(127, 0, 0, 1, 52000), received: sin(127, 0, 0, 1, 54000),
		fsids: []uint64{0x7d35c06c4444f0c3, 0x30cb74835088bfe0, 0x7d35c06c4444f0c3},
	}
	res, err := detcore.NewEngine(f, detcore.Config{Quantum: 1000}, tr.Root()).Run()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := tr.Finished(); err != nil || res.ExitCode != 0 {
		t.Fatalf("after Run: %v, exit %d", err, res.ExitCode)
	}

	port := func(addr uint64) uint16 { // the guest is gone: read its memory as words
		w := tr.Word(addr)
		return uint16(w>>16&0xff)<<8 | uint16(w>>24)
	}
	for _, c := range []struct {
		what string
		addr uint64
		want uint16
	}{
		{"listener's getsockname", out(0), v0},
		{"accept's peer", out(1), v0 + 1},
		{"client's getsockname", out(2), v0 + 1},
		{"client's getpeername", out(3), v0},
		{"outside server's port", out(4), 443},
		{"client of the outside server", out(5), v0 + 2},
		{"explicit port", out(6), 8080},
		{"recvfrom's source", out(7), v0 + 1},
		{"connect's address after the call", in(1), v0},
		{"sendto's address after the call", in(5), v0},
	} {
		if got := port(c.addr); got != c.want {
			t.Errorf("%s: port %d, want %d", c.what, got, c.want)
		}
	}
	if want := []uint16{51000, 443, 55000, v0 + 1}; !slices.Equal(f.saw, want) {
		t.Errorf("the kernel saw destination ports %v, want %v", f.saw, want)
	}
	var fsids []string
	for i := range 3 {
		fsids = append(fsids, fmt.Sprintf("%#x", tr.Word(statBuf+128*uint64(i)+56)))
	}
	if want := []string{"0x8000", "0x8001", "0x8000"}; !slices.Equal(fsids, want) {
		t.Errorf("f_fsid val[0]s %v, want %v", fsids, want)
	}
	want := []string{
		"bind:exit",        // to port 0: learns the port
		"getsockname:exit", // rewritten
		"connect:exit",     // unbound, and to a virtual port
		"accept:exit",
		"getsockname:exit",
		"getpeername:exit",
		"connect:exit", // unbound
		"getpeername:exit",
		"getsockname:exit",
		"bind",             // explicit: nothing to do at the exit
		"getsockname:exit", // (an explicit port is left alone there)
		"bind:exit",
		"sendto:exit",   // unbound, and to a virtual port
		"recvfrom:exit", // asks for the source
		"sendto",        // bound, and to an outside address
		"recvfrom",      // no source asked for
		"getsockname",   // AF_UNIX
		"statfs:exit", "statfs:exit", "statfs:exit",
		"exit_group",
	}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls run:\n got %q\nwant %q", f.calls, want)
	}
}
