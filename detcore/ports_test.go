package detcore

import (
	"testing"
)

// v4 and v6 build raw struct sockaddr_in and sockaddr_in6.
func v4(a, b, c, d byte, port uint16) []byte {
	s := make([]byte, 16)
	s[0] = afInet
	putPort(s, port)
	copy(s[4:], []byte{a, b, c, d})
	return s
}

func v6(ip [16]byte, port uint16) []byte {
	s := make([]byte, 28)
	s[0] = afInet6
	putPort(s, port)
	copy(s[8:], ip[:])
	return s
}

var (
	ip6Loopback = [16]byte{15: 1}
	ip6Any      = [16]byte{}
	ip6Mapped   = [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1} // ::ffff:127.0.0.1
)

func mustParse(t *testing.T, b []byte) sockAddr {
	t.Helper()
	a, ok := parseSockaddr(b)
	if !ok {
		t.Fatalf("parseSockaddr(%x) failed", b)
	}
	return a
}

func TestParseSockaddr(t *testing.T) {
	unix := append([]byte{1, 0}, "/tmp/sock\x00"...)
	cases := []struct {
		name     string
		b        []byte
		ok       bool
		port     uint16
		ipKnown  bool
		ip       [16]byte
		wildcard bool
	}{
		{name: "v4 loopback", b: v4(127, 0, 0, 1, 8080), ok: true, port: 8080, ipKnown: true, ip: ip6Mapped},
		{name: "v4 any", b: v4(0, 0, 0, 0, 0), ok: true, ipKnown: true, ip: [16]byte{10: 0xff, 11: 0xff}, wildcard: true},
		{name: "v6 loopback", b: v6(ip6Loopback, 40000), ok: true, port: 40000, ipKnown: true, ip: ip6Loopback},
		{name: "v6 any", b: v6(ip6Any, 1), ok: true, port: 1, ipKnown: true, wildcard: true},
		{name: "v4-mapped", b: v6(ip6Mapped, 443), ok: true, port: 443, ipKnown: true, ip: ip6Mapped},
		{name: "v6 RFC 2133 length", b: v6(ip6Loopback, 7)[:24], ok: true, port: 7, ipKnown: true, ip: ip6Loopback},
		{name: "v4 cut to its port", b: v4(127, 0, 0, 1, 9)[:4], ok: true, port: 9},
		{name: "v6 cut short", b: v6(ip6Loopback, 9)[:20], ok: true, port: 9},
		{name: "too short", b: v4(127, 0, 0, 1, 9)[:3]},
		{name: "unix", b: unix},
		{name: "unspec", b: make([]byte, 16)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, ok := parseSockaddr(c.b)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if a.port != c.port || a.ipKnown != c.ipKnown || a.wildcard() != c.wildcard {
				t.Errorf("got port %d ipKnown %v wildcard %v, want %d %v %v", a.port, a.ipKnown, a.wildcard(), c.port, c.ipKnown, c.wildcard)
			}
			if c.ipKnown && !c.wildcard && a.ip != c.ip {
				t.Errorf("got ip %x, want %x", a.ip, c.ip)
			}
		})
	}
}

func TestPutPort(t *testing.T) {
	b := v6(ip6Loopback, 1)
	putPort(b, 0xa1b2)
	if b[2] != 0xa1 || b[3] != 0xb2 || mustParse(t, b).port != 0xa1b2 {
		t.Errorf("putPort wrote % x", b[:4])
	}
	if b[0] != afInet6 || b[1] != 0 || b[4] != 0 {
		t.Errorf("putPort touched more than the port: % x", b[:8])
	}
}

func TestMeets(t *testing.T) {
	lo4 := mustParse(t, v4(127, 0, 0, 1, 1))
	any4 := mustParse(t, v4(0, 0, 0, 0, 1))
	lan := mustParse(t, v4(10, 0, 0, 5, 1))
	lo6 := mustParse(t, v6(ip6Loopback, 1))
	mapped := mustParse(t, v6(ip6Mapped, 1))
	any6 := mustParse(t, v6(ip6Any, 1))
	cut := mustParse(t, v4(10, 0, 0, 5, 1)[:4])
	cases := []struct {
		name string
		a, b sockAddr
		want bool
	}{
		{"same", lo4, lo4, true},
		{"v4 and v4-mapped", lo4, mapped, true},
		{"wildcard v4", any4, lan, true},
		{"wildcard v6 meets v4", any6, lo4, true},
		{"other address", lo4, lan, false},
		{"v4 and v6 loopback", lo4, lo6, false},
		{"address unknown", cut, lo4, true},
	}
	for _, c := range cases {
		if got := c.a.meets(c.b); got != c.want {
			t.Errorf("%s: %v.meets(%v) = %v, want %v", c.name, c.a, c.b, got, c.want)
		}
		if got := c.b.meets(c.a); got != c.want {
			t.Errorf("%s (swapped): got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPortTableAllocation(t *testing.T) {
	pt := newPortTable()
	lo := func(port uint16) sockAddr { return sockAddr{port: port, ip: ip6Mapped, ipKnown: true} }
	pt.noteExplicit(ipprotoTCP, VirtualPortBase+1)
	got := []uint16{
		pt.bind(ipprotoTCP, lo(51000)),
		pt.bind(ipprotoTCP, lo(33000)), // skips the explicit port
		pt.bind(ipprotoUDP, lo(51000)), // UDP has its own ports
		pt.bind(ipprotoTCP, lo(60000)),
	}
	want := []uint16{VirtualPortBase, VirtualPortBase + 2, VirtualPortBase, VirtualPortBase + 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("virtual ports %v, want %v", got, want)
		}
	}
	// The same bindings give the same ports: the table is a function of
	// the sequence of bindings alone.
	pt2 := newPortTable()
	pt2.noteExplicit(ipprotoTCP, VirtualPortBase+1)
	if v := pt2.bind(ipprotoTCP, lo(12345)); v != VirtualPortBase {
		t.Errorf("another real port got %d, want %d", v, VirtualPortBase)
	}
}

func TestPortTableWraps(t *testing.T) {
	pt := newPortTable()
	pt.noteExplicit(ipprotoUDP, VirtualPortBase)
	pt.next[ipprotoUDP] = VirtualPortEnd - 1
	a := sockAddr{port: 1000}
	if v := pt.bind(ipprotoUDP, a); v != VirtualPortEnd-1 {
		t.Errorf("last port: got %d", v)
	}
	if v := pt.bind(ipprotoUDP, a); v != VirtualPortBase+1 {
		t.Errorf("after wrapping (the base is explicit): got %d, want %d", v, VirtualPortBase+1)
	}
}

func TestPortTableLookups(t *testing.T) {
	pt := newPortTable()
	addr := func(b []byte) sockAddr { return mustParse(t, b) }
	// A listener on 127.0.0.1, a client connected from 127.0.0.1, a
	// wildcard UDP socket, an explicit port.
	lv := pt.bind(ipprotoTCP, addr(v4(127, 0, 0, 1, 51000)))
	cv := pt.bind(ipprotoTCP, addr(v4(127, 0, 0, 1, 52000)))
	uv := pt.bind(ipprotoUDP, addr(v6(ip6Any, 53000)))
	pt.noteExplicit(ipprotoTCP, 8080)

	type lookup struct {
		name  string
		proto int
		a     sockAddr
		local bool
		want  uint16
		ok    bool
	}
	for _, c := range []lookup{
		{"listener's own", ipprotoTCP, addr(v4(127, 0, 0, 1, 51000)), true, lv, true},
		{"client's peer (v4-mapped)", ipprotoTCP, addr(v6(ip6Mapped, 51000)), false, lv, true},
		{"accept's peer", ipprotoTCP, addr(v4(127, 0, 0, 1, 52000)), false, cv, true},
		{"another host with that port", ipprotoTCP, addr(v4(93, 184, 216, 34, 52000)), false, 0, false},
		{"a UDP port is not a TCP one", ipprotoTCP, addr(v4(127, 0, 0, 1, 53000)), false, 0, false},
		{"wildcard UDP from any address", ipprotoUDP, addr(v4(10, 0, 0, 5, 53000)), false, uv, true},
		{"outside server", ipprotoTCP, addr(v4(127, 0, 0, 1, 5432)), false, 0, false},
		{"explicit port, own", ipprotoTCP, addr(v4(0, 0, 0, 0, 8080)), true, 0, false},
		{"unbound", ipprotoTCP, addr(v4(0, 0, 0, 0, 0)), true, 0, false},
	} {
		v, ok := pt.virtual(c.proto, c.a, c.local)
		if ok != c.ok || v != c.want {
			t.Errorf("virtual, %s: got %d %v, want %d %v", c.name, v, ok, c.want, c.ok)
		}
	}
	for _, c := range []lookup{
		{"to the listener", ipprotoTCP, addr(v4(127, 0, 0, 1, lv)), false, 51000, true},
		{"to the listener, v4-mapped", ipprotoTCP, addr(v6(ip6Mapped, lv)), false, 51000, true},
		{"to the listener, another address", ipprotoTCP, addr(v4(10, 0, 0, 5, lv)), false, 0, false},
		{"to the wildcard UDP socket", ipprotoUDP, addr(v6(ip6Loopback, uv)), false, 53000, true},
		{"to a port handed out for nothing", ipprotoTCP, addr(v4(127, 0, 0, 1, VirtualPortBase+7)), false, 0, false},
		{"to a real port", ipprotoTCP, addr(v4(127, 0, 0, 1, 51000)), false, 0, false},
	} {
		r, ok := pt.real(c.proto, c.a)
		if ok != c.ok || r != c.want {
			t.Errorf("real, %s: got %d %v, want %d %v", c.name, r, ok, c.want, c.ok)
		}
	}
	// A kernel-chosen port the table missed gets a virtual port when its
	// own socket asks, and keeps it.
	a := addr(v4(127, 0, 0, 1, 54000))
	if _, ok := pt.virtual(ipprotoTCP, a, false); ok {
		t.Errorf("a peer's unknown port was made virtual")
	}
	v, ok := pt.virtual(ipprotoTCP, a, true)
	if v2, ok2 := pt.virtual(ipprotoTCP, a, false); !ok || !ok2 || v2 != v || v != cv+1 {
		t.Errorf("missed port: own %d %v, then peer %d %v; want %d", v, ok, v2, ok2, cv+1)
	}
	// The listener's port bound again on [::] by another socket: ::1
	// reaches it now; a port's new socket with another real port changes
	// nothing.
	if _, ok := pt.real(ipprotoTCP, addr(v6(ip6Loopback, lv))); ok {
		t.Errorf("::1 reached the listener bound on 127.0.0.1")
	}
	pt.rebind(ipprotoTCP, lv, addr(v6(ip6Any, 51000)))
	if r, ok := pt.real(ipprotoTCP, addr(v6(ip6Loopback, lv))); !ok || r != 51000 {
		t.Errorf("after a bind on [::], ::1 to the listener's port: got %d %v, want 51000", r, ok)
	}
	pt.rebind(ipprotoTCP, cv, addr(v6(ip6Any, 51001)))
	if _, ok := pt.real(ipprotoTCP, addr(v6(ip6Loopback, cv))); ok {
		t.Errorf("a rebind with another real port moved the client's binding")
	}
}

func TestPortSpace(t *testing.T) {
	for proto, want := range map[int]int{ipprotoTCP: ipprotoTCP, ipprotoMPTCP: ipprotoTCP, ipprotoUDP: ipprotoUDP, 1: 0, 132: 0, 0: 0} {
		got, ok := portSpace(proto)
		if got != want || ok != (want != 0) {
			t.Errorf("portSpace(%d) = %d %v, want %d", proto, got, ok, want)
		}
	}
}

func TestFsidTable(t *testing.T) {
	ft := newFsidTable()
	got := []uint64{ft.virtual(0x7d35c06c4444f0c3), ft.virtual(0), ft.virtual(0x30cb74835088bfe0), ft.virtual(0x7d35c06c4444f0c3)}
	want := []uint64{virtualFsidBase, 0, virtualFsidBase + 1, virtualFsidBase}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("virtual ids %#x, want %#x", got, want)
		}
	}
}

func TestSideTable(t *testing.T) {
	var s sideTable[int]
	e1, e2 := &Engine{}, &Engine{}
	n := 0
	mk := func() *int { n++; v := n; return &v }
	if a, b, c := s.get(e1, mk), s.get(e2, mk), s.get(e1, mk); *a != 1 || *b != 2 || c != a {
		t.Errorf("got %d %d %d (same as first: %v), want one value per engine", *a, *b, *c, c == a)
	}
}
