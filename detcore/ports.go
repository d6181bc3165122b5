package detcore

import (
	"runtime"
	"sync"
	"weak"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Ephemeral ports. The kernel picks the port of a TCP or UDP socket the
// guest binds to port 0, or that it uses unbound (connect, listen, sendto
// and sendmsg bind it implicitly), and picks another on every run. The
// guest sees virtual ports instead, handed out in the order those bindings
// happen, from VirtualPortBase, per protocol (TCP and UDP have separate
// port spaces; IPv4 and IPv6 share one, as in the kernel), skipping the
// ports the guest binds explicitly. The real sockets keep their real ports:
//
//   - At the exit of a call that gave a socket its port (bind to port 0,
//     or connect, sendto, sendmsg or sendmmsg on an unbound socket), the
//     engine asks the tracer the socket's real address (SocketTracer) and
//     hands the next virtual port out for it. listen on an unbound socket
//     is not intercepted: only the listener's owner can learn that port
//     (getsockname), which hands it its virtual port then.
//   - Every address the guest reads back is rewritten real→virtual at the
//     call's exit: getsockname and getpeername, the peer accept and
//     accept4 return, the source of recvfrom, recvmsg and recvmmsg. A port
//     that is no guest socket's virtual one (an outside server's, a port
//     the guest bound explicitly) is left alone.
//   - Every address the guest passes in is rewritten virtual→real for the
//     duration of the call: the destination of connect, sendto, sendmsg
//     and sendmmsg, and the address of a bind to a virtual port in use.
//     The engine changes the port in the guest's own sockaddr at the
//     seccomp stop and puts the guest's bytes back at the call's exit, so
//     the guest never sees the change. (A scratch area would need a free
//     place in the guest's memory and a changed register; the guest's own
//     buffer is as good and always there.)
//   - Explicit ports (bind to a non-zero port that is not a virtual one in
//     use) and remote ports (a connection to an outside server) are never
//     rewritten. AF_UNIX and other families are left alone.
//
// Stops: bind, connect, getsockname and getpeername are intercepted (one
// stop each). A call gets an exit stop only when there is something to do
// there: a binding to learn, an address to rewrite (getsockname and
// getpeername of a TCP or UDP socket; accept and receives that ask for
// the peer's address), guest bytes to put back. A call that has to wait
// (accept, or a receive with nothing to read yet) and asks for the peer's
// address could get no exit stop once its wait ends (the engine then lets
// it run without stopping it again), so it is rewound to its syscall
// instruction while it waits: once ready it makes the call again, meets
// its seccomp stop again (one more stop) and is handled as a call that
// does not wait. A signal that ends the wait puts the call back, so that
// it runs and the kernel interrupts it as it would have.
//
// Recording and replay: the call decisions that change the schedule or the
// journal (which calls are intercepted, the rewinding of a waiting call)
// depend only on the guest's memory and the journaled answers, so they are
// the same in run, record and replay. The rest happens only where the
// sockets are real: the tracer's look at a socket is not journaled (the
// recorder passes it through), and the rewriting happens before the
// recorder reads a call's results, so the trace holds the virtual
// addresses. Replay emulates every call on a network socket from the
// trace and has no SocketTracer: its port table stays empty and nothing is
// rewritten, and the guest reads the virtual addresses the recording saw.
//
// Limits: a virtual port is handed out per binding and never taken back
// (after VirtualPortEnd they wrap around); when the kernel gives two live
// sockets the same real port (connections to different peers may share
// one), the older one's address reads the newer one's virtual port; a
// destination is taken for a guest socket
// when its port is a virtual one in use and its address can reach that
// socket (the socket's own address, or any for a socket bound to the
// wildcard address); a send that had to wait keeps the real port in the
// guest's sockaddr, and learns no implicit binding.

// SocketTracer is implemented by tracers that can look at the guest's
// sockets from outside. Like Tracer's, its methods are called from the
// goroutine that runs Engine.Run. The engine asks it only about calls
// whose results the journal records or that replay does not make, so a
// recorder passes it through unrecorded.
type SocketTracer interface {
	// SocketName returns the protocol (SO_PROTOCOL: IPPROTO_TCP, ...) of
	// socket fd of tid's process and its local address (with peer, its
	// peer's), the whole struct sockaddr getsockname (getpeername) gives.
	//
	// Errors: any error means the engine leaves the call alone (fd is no
	// socket, or is not connected, or tid is gone).
	SocketName(tid, fd int, peer bool) (proto int, addr []byte, err error)
}

// Address families, protocols and sizes from <linux/socket.h>,
// <linux/in.h> and <linux/in6.h>.
const (
	afInet       = 2
	afInet6      = 10
	ipprotoTCP   = 6
	ipprotoUDP   = 17
	ipprotoMPTCP = 262 // shares TCP's ports
	// sockaddrMax bounds the addresses the engine reads (struct
	// sockaddr_storage).
	sockaddrMax = 128
	// msghdrSize and mmsghdrSize are the sizes of struct msghdr and
	// struct mmsghdr; msg_name is at 0 and msg_namelen at 8 in both.
	msghdrSize  = 56
	mmsghdrSize = 64
	// uioMaxiov bounds recvmmsg and sendmmsg (UIO_MAXIOV).
	uioMaxiov = 1024
)

// VirtualPortBase is the first virtual port; VirtualPortEnd is where they
// wrap around to VirtualPortBase. Both are in Linux's default ephemeral
// range (32768 to 60999).
const (
	VirtualPortBase = 40000
	VirtualPortEnd  = 61000
)

func init() {
	policy[abi.SYS_BIND] = sysBind
	policy[abi.SYS_CONNECT] = sysConnect
	policy[abi.SYS_GETSOCKNAME] = sysSockName
	policy[abi.SYS_GETPEERNAME] = sysSockName
	// These have handlers of their own (io.go): they wait as before.
	for _, nr := range []int{abi.SYS_ACCEPT, abi.SYS_ACCEPT4, abi.SYS_RECVFROM, abi.SYS_RECVMSG, abi.SYS_RECVMMSG} {
		policy[nr] = receivesNames(orPassthrough(policy[nr]))
	}
	for _, nr := range []int{abi.SYS_SENDTO, abi.SYS_SENDMSG, abi.SYS_SENDMMSG} {
		policy[nr] = sendsNames(orPassthrough(policy[nr]))
	}
}

func orPassthrough(h handler) handler {
	if h == nil {
		return passthrough
	}
	return h
}

// sockAddr is the part of an AF_INET or AF_INET6 address the port table
// looks at.
type sockAddr struct {
	port uint16
	// ip is the address in IPv6 form (IPv4 as ::ffff:a.b.c.d), when the
	// bytes held it (ipKnown).
	ip      [16]byte
	ipKnown bool
}

// parseSockaddr decodes an AF_INET or AF_INET6 address, which may be cut
// short (a guest's buffer smaller than the address); false for other
// families and for bytes too few to hold the port.
func parseSockaddr(b []byte) (sockAddr, bool) {
	var a sockAddr
	if len(b) < 4 {
		return a, false
	}
	a.port = uint16(b[2])<<8 | uint16(b[3]) // network byte order
	switch le16(b) {
	case afInet:
		if len(b) >= 8 {
			a.ip[10], a.ip[11] = 0xff, 0xff
			copy(a.ip[12:], b[4:8])
			a.ipKnown = true
		}
	case afInet6:
		if len(b) >= 24 {
			copy(a.ip[:], b[8:24])
			a.ipKnown = true
		}
	default:
		return a, false
	}
	return a, true
}

// putPort sets the port of an AF_INET or AF_INET6 address.
func putPort(b []byte, port uint16) { b[2], b[3] = byte(port>>8), byte(port) }

// wildcard reports whether a is INADDR_ANY or in6addr_any.
func (a sockAddr) wildcard() bool {
	if !a.ipKnown {
		return false
	}
	for i, x := range a.ip {
		if x != 0 && !(i >= 10 && i < 12 && x == 0xff) {
			return false
		}
	}
	return true
}

// meets reports whether addresses a and b may name the same socket: one
// of them is a wildcard or unknown, or they are equal.
func (a sockAddr) meets(b sockAddr) bool {
	return !a.ipKnown || !b.ipKnown || a.wildcard() || b.wildcard() || a.ip == b.ip
}

// portSpace returns the port space of a socket protocol, false for those
// whose ports are not virtual (ICMP echo ids, SCTP, raw sockets).
func portSpace(proto int) (int, bool) {
	switch proto {
	case ipprotoTCP, ipprotoMPTCP:
		return ipprotoTCP, true
	case ipprotoUDP:
		return ipprotoUDP, true
	}
	return 0, false
}

type portKey struct {
	proto int
	port  uint16
}

// portBinding is one port the kernel chose for a guest socket.
type portBinding struct {
	real, virt uint16
	// local is the socket's address when it got its port.
	local sockAddr
}

// portTable maps the real ports the kernel chose for the guest's sockets
// to virtual ones, per protocol. It is pure: the engine feeds it.
type portTable struct {
	byReal   map[portKey]*portBinding
	byVirt   map[portKey]*portBinding
	explicit map[portKey]bool
	// next is the next virtual port to try, per protocol.
	next map[int]uint16
}

func newPortTable() *portTable {
	return &portTable{
		byReal:   map[portKey]*portBinding{},
		byVirt:   map[portKey]*portBinding{},
		explicit: map[portKey]bool{},
		next:     map[int]uint16{},
	}
}

// bind records that the kernel gave a socket of protocol proto the local
// address local, and returns the socket's virtual port: the next one.
func (pt *portTable) bind(proto int, local sockAddr) uint16 {
	b := &portBinding{real: local.port, virt: pt.allocate(proto), local: local}
	pt.byReal[portKey{proto, b.real}] = b
	pt.byVirt[portKey{proto, b.virt}] = b
	return b.virt
}

// allocate hands out the next virtual port of protocol proto, skipping the
// ports bound explicitly.
func (pt *portTable) allocate(proto int) uint16 {
	p := pt.next[proto]
	for n := 0; ; n++ {
		if p < VirtualPortBase || p >= VirtualPortEnd {
			p = VirtualPortBase
		}
		if !pt.explicit[portKey{proto, p}] || n > VirtualPortEnd-VirtualPortBase {
			break
		}
		p++
	}
	pt.next[proto] = p + 1
	return p
}

// noteExplicit records a port the guest binds explicitly: it is never
// handed out as a virtual port.
func (pt *portTable) noteExplicit(proto int, port uint16) {
	pt.explicit[portKey{proto, port}] = true
}

// virtual returns the virtual port to show in place of the real port of
// address a, if a is a guest socket's. With local, a is the guest's own
// socket's address (getsockname): a port chosen by the kernel that the
// table missed is handed a virtual port now.
func (pt *portTable) virtual(proto int, a sockAddr, local bool) (uint16, bool) {
	if a.port == 0 {
		return 0, false
	}
	k := portKey{proto, a.port}
	if b, ok := pt.byReal[k]; ok && (local || b.local.meets(a)) {
		return b.virt, true
	}
	if !local || pt.explicit[k] {
		return 0, false
	}
	return pt.bind(proto, a), true
}

// rebind records that the socket now bound to the real port of virtual
// port virt has the local address local.
func (pt *portTable) rebind(proto int, virt uint16, local sockAddr) {
	if b, ok := pt.byVirt[portKey{proto, virt}]; ok && local.port == b.real {
		b.local = local
	}
}

// real returns the real port a guest's destination address a stands for,
// if its port is a virtual one in use by a socket a can reach.
func (pt *portTable) real(proto int, a sockAddr) (uint16, bool) {
	b, ok := pt.byVirt[portKey{proto, a.port}]
	if !ok || !b.local.meets(a) {
		return 0, false
	}
	return b.real, true
}

// sideTable keeps state of the engine's beside it, for a mechanism kept
// in a file of its own: one value per Engine, made on first use and
// dropped when the engine is collected. (The Engine struct is shared by
// every mechanism; this keeps the port and fsid tables out of it.)
type sideTable[T any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[Engine]]*T // protected by mu
}

func (s *sideTable[T]) get(e *Engine, mk func() *T) *T {
	k := weak.Make(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[k]; ok {
		return v
	}
	if s.m == nil {
		s.m = map[weak.Pointer[Engine]]*T{}
	}
	v := mk()
	s.m[k] = v
	runtime.AddCleanup(e, func(k weak.Pointer[Engine]) {
		s.mu.Lock()
		delete(s.m, k)
		s.mu.Unlock()
	}, k)
	return v
}

var portTables sideTable[portTable]

// ports returns the engine's port table.
func (e *Engine) ports() *portTable { return portTables.get(e, newPortTable) }

// atExit adds f to what runs at the exit of t's call, after whatever a
// handler already put there, and asks for that exit stop.
func (t *thread) atExit(f func(e *Engine, t *thread)) {
	prev := t.onExit
	if t.act != actExitStop || prev == nil {
		t.act, t.onExit = actExitStop, f
		return
	}
	t.onExit = func(e *Engine, t *thread) {
		prev(e, t)
		f(e, t)
	}
}

// inetSocket returns the port space and local address of descriptor fd of
// t's process, if it is a TCP or UDP socket and the tracer can tell.
func (e *Engine) inetSocket(t *thread, fd int) (int, sockAddr, bool) {
	st, ok := e.t.(SocketTracer)
	if !ok {
		return 0, sockAddr{}, false
	}
	proto, raw, err := st.SocketName(t.tid, fd, false)
	if err != nil {
		return 0, sockAddr{}, false
	}
	space, ok := portSpace(proto)
	a, inet := parseSockaddr(raw)
	return space, a, ok && inet
}

// readName reads the n-byte address at addr (at most sockaddrMax bytes).
func (e *Engine) readName(t *thread, addr, n uint64) ([]byte, bool) {
	if addr == 0 || n == 0 {
		return nil, false
	}
	b := make([]byte, min(n, sockaddrMax))
	return b, e.t.ReadMem(t.tid, addr, b) == nil
}

// learnAtExit hands a virtual port out, at the exit of t's call, for
// socket fd if the call bound it (it had no port before).
func (e *Engine) learnAtExit(t *thread, fd, space int) {
	t.atExit(func(e *Engine, t *thread) {
		if _, local, ok := e.inetSocket(t, fd); ok && local.port != 0 {
			e.ports().bind(space, local)
		}
	})
}

// patchPort writes port in place of the port of the guest's address at
// addr for the duration of t's call, and puts the guest's port back at
// its exit (when wait is set, the call waits first, and has no exit of
// its own: the port stays).
func (e *Engine) patchPort(t *thread, addr uint64, guest, port uint16, wait bool) {
	var b [4]byte
	putPort(b[:], port)
	if e.t.WriteMem(t.tid, addr+2, b[2:4]) != nil || wait {
		return
	}
	putPort(b[:], guest)
	t.atExit(func(e *Engine, t *thread) { _ = e.t.WriteMem(t.tid, addr+2, b[2:4]) })
}

// addrCall decodes a bind or connect of t: its socket fd, the inet
// address it passes, and the socket's port space and local address;
// false when the call is not one on an inet socket.
func (e *Engine) addrCall(t *thread) (fd int, a sockAddr, space int, local sockAddr, ok bool) {
	r := &t.regs
	fd = int(int32(r.Rdi))
	b, ok := e.readName(t, r.Rsi, r.Rdx)
	a, inet := parseSockaddr(b)
	if !ok || !inet {
		return fd, a, 0, local, false
	}
	space, local, ok = e.inetSocket(t, fd)
	return fd, a, space, local, ok
}

// sysBind: bind to port 0 gets a virtual port at its exit; bind to a
// virtual port in use binds its real port; any other port is explicit.
func sysBind(e *Engine, t *thread) {
	r := &t.regs
	if e.unixBind(t) {
		return
	}
	fd, a, space, local, ok := e.addrCall(t)
	if !ok {
		return
	}
	pt := e.ports()
	switch real, virt := pt.real(space, a); {
	case a.port == 0:
		if local.port == 0 {
			e.learnAtExit(t, fd, space)
		}
	case virt:
		e.patchPort(t, r.Rsi, a.port, real, false)
		// The socket bound now has the port: a destination reaches it
		// by this socket's address, not by that of the one the port was
		// handed out for (closed, most often: find_unused_port, then a
		// server on [::] reached over ::1).
		t.atExit(func(e *Engine, t *thread) {
			if _, now, ok := e.inetSocket(t, fd); ok && int64(t.regs.Rax) == 0 {
				e.ports().rebind(space, a.port, now)
			}
		})
	default:
		pt.noteExplicit(space, a.port)
	}
}

// sysConnect: the destination's virtual port becomes its real one for the
// call; an unbound socket gets its virtual port at the exit.
func sysConnect(e *Engine, t *thread) {
	r := &t.regs
	fd, a, space, local, ok := e.addrCall(t)
	if !ok {
		return
	}
	if real, ok := e.ports().real(space, a); ok {
		e.patchPort(t, r.Rsi, a.port, real, false)
	}
	if local.port == 0 {
		e.learnAtExit(t, fd, space)
	}
}

// sysSockName: getsockname and getpeername are rewritten at their exit.
func sysSockName(e *Engine, t *thread) {
	r := &t.regs
	fd := int(int32(r.Rdi))
	if r.Rsi == 0 || r.Rdx == 0 {
		return
	}
	space, _, ok := e.inetSocket(t, fd)
	if !ok {
		return
	}
	inLen, ok := e.readU32(t, r.Rdx)
	if !ok {
		return
	}
	n := name{addr: r.Rsi, lenp: r.Rdx, size: inLen}
	local := t.nr == abi.SYS_GETSOCKNAME
	t.atExit(func(e *Engine, t *thread) {
		if t.regs.Rax == 0 {
			e.showVirtual(t, space, n, local)
		}
	})
}

// name is an address buffer of a call: size bytes at addr, and (for one
// the kernel fills in) the length it writes at lenp. msg is the index of
// its message, for recvmmsg and sendmmsg.
type name struct {
	addr, lenp uint64
	size       uint32
	msg        int
}

// showVirtual rewrites the address the kernel wrote in n real→virtual.
func (e *Engine) showVirtual(t *thread, space int, n name, local bool) {
	got, ok := e.readU32(t, n.lenp)
	if !ok || int32(n.size) <= 0 {
		return
	}
	b, ok := e.readName(t, n.addr, uint64(min(got, n.size)))
	a, inet := parseSockaddr(b)
	if !ok || !inet {
		return
	}
	if v, ok := e.ports().virtual(space, a, local); ok && v != a.port {
		var p [4]byte
		putPort(p[:], v)
		_ = e.t.WriteMem(t.tid, n.addr+2, p[2:4])
	}
}

// callNames returns the address buffers t's call (accept, accept4,
// recvfrom, recvmsg, recvmmsg) fills in, or (sendto, sendmsg, sendmmsg)
// reads, that the guest gave.
func (e *Engine) callNames(t *thread) []name {
	r := &t.regs
	var one name
	switch t.nr {
	case abi.SYS_ACCEPT, abi.SYS_ACCEPT4:
		one = name{addr: r.Rsi, lenp: r.Rdx}
	case abi.SYS_RECVFROM:
		one = name{addr: r.R8, lenp: r.R9}
	case abi.SYS_SENDTO:
		if r.R8 != 0 {
			return []name{{addr: r.R8, size: uint32(min(r.R9, sockaddrMax))}}
		}
		return nil
	case abi.SYS_RECVMSG, abi.SYS_SENDMSG:
		return e.msgNames(t, r.Rsi, 1, msghdrSize)
	case abi.SYS_RECVMMSG, abi.SYS_SENDMMSG:
		return e.msgNames(t, r.Rsi, min(r.Rdx, uioMaxiov), mmsghdrSize)
	}
	if one.addr == 0 || one.lenp == 0 {
		return nil
	}
	size, ok := e.readU32(t, one.lenp)
	if !ok {
		return nil
	}
	one.size = size
	return []name{one}
}

// msgNames returns the msg_name buffers of the cnt message headers of
// the given size at addr; lenp points at each header's msg_namelen.
func (e *Engine) msgNames(t *thread, addr, cnt uint64, size int) []name {
	if addr == 0 || cnt == 0 {
		return nil
	}
	hs := make([]byte, int(cnt)*size)
	if e.t.ReadMem(t.tid, addr, hs) != nil {
		return nil
	}
	var ns []name
	for i := 0; i < int(cnt); i++ {
		h := hs[i*size:]
		if p := le64(h); p != 0 {
			ns = append(ns, name{addr: p, lenp: addr + uint64(i*size) + 8, size: le32(h[8:]), msg: i})
		}
	}
	return ns
}

// receivesNames wraps the handler of a call that may wait and returns
// peers' addresses (accept, accept4, recvfrom, recvmsg, recvmmsg): when
// the guest asks for them, they are rewritten at the call's exit.
func receivesNames(inner handler) handler {
	return func(e *Engine, t *thread) {
		inner(e, t)
		ns := e.callNames(t)
		if len(ns) == 0 {
			return
		}
		switch {
		case t.state == tsBlocked && t.block != nil && t.block.kind == bkFd:
			e.retryWhenReady(t)
		case t.state == tsReady && t.act != actEmulate:
			space, _, ok := e.inetSocket(t, int(int32(t.regs.Rdi)))
			if !ok {
				return
			}
			t.atExit(func(e *Engine, t *thread) {
				ret := int64(t.regs.Rax)
				if ret < 0 {
					return
				}
				for _, n := range ns {
					if t.nr != abi.SYS_RECVMMSG || int64(n.msg) < ret { // the messages received
						e.showVirtual(t, space, n, false)
					}
				}
			})
		}
	}
}

// retryWhenReady rewinds t, which waits in its call (a bkFd wait), to its
// syscall instruction: once its descriptor is ready it resumes, skips the
// call and makes it again, meeting its seccomp stop (and so its exit
// stop) again. A signal that ends the wait restores the call, which the
// kernel then interrupts as it would have.
func (e *Engine) retryWhenReady(t *thread) {
	b := t.block
	orig := t.regs
	if !e.remake(t) {
		return
	}
	mask := b.wakeMask
	b.wakeMask = func(blocked uint64) uint64 {
		wake := ^blocked
		if mask != nil {
			wake = mask(blocked)
		}
		own, shared, _, err := e.signals(t.tid)
		if err == nil && (own|shared)&(wake|1<<(abi.SIGSTOP-1)) != 0 && t.block == b && !t.atSyscall {
			if e.t.SetRegs(t.tid, &orig) == nil {
				t.regs = orig
				t.atSyscall = true
			}
		}
		return wake
	}
}

// sendsNames wraps the handler of a call that may wait and sends to
// addresses (sendto, sendmsg, sendmmsg): a destination's virtual port
// becomes its real one for the call, and an unbound socket gets its
// virtual port at the exit.
func sendsNames(inner handler) handler {
	return func(e *Engine, t *thread) {
		inner(e, t)
		if t.act == actEmulate || (t.state != tsReady && t.state != tsBlocked) {
			return
		}
		ns := e.callNames(t)
		if len(ns) == 0 {
			return
		}
		fd := int(int32(t.regs.Rdi))
		space, local, ok := e.inetSocket(t, fd)
		if !ok {
			return
		}
		wait := t.state == tsBlocked
		pt := e.ports()
		for _, n := range ns {
			b, ok := e.readName(t, n.addr, uint64(n.size))
			a, inet := parseSockaddr(b)
			if !ok || !inet {
				continue
			}
			if real, ok := pt.real(space, a); ok {
				e.patchPort(t, n.addr, a.port, real, wait)
			}
		}
		if local.port == 0 && !wait {
			e.learnAtExit(t, fd, space)
		}
	}
}
