package strace

import (
	"net/netip"
	"strings"
)

// Address families from <bits/socket.h>.
var sockDomains = map[int64]string{
	0: "AF_UNSPEC", 1: "AF_UNIX", 2: "AF_INET", 3: "AF_AX25", 4: "AF_IPX",
	5: "AF_APPLETALK", 6: "AF_NETROM", 7: "AF_BRIDGE", 8: "AF_ATMPVC", 9: "AF_X25",
	10: "AF_INET6", 11: "AF_ROSE", 13: "AF_NETBEUI", 14: "AF_SECURITY", 15: "AF_KEY",
	16: "AF_NETLINK", 17: "AF_PACKET", 18: "AF_ASH", 19: "AF_ECONET", 20: "AF_ATMSVC",
	21: "AF_RDS", 22: "AF_SNA", 23: "AF_IRDA", 24: "AF_PPPOX", 25: "AF_WANPIPE",
	26: "AF_LLC", 27: "AF_IB", 28: "AF_MPLS", 29: "AF_CAN", 30: "AF_TIPC",
	31: "AF_BLUETOOTH", 32: "AF_IUCV", 33: "AF_RXRPC", 34: "AF_ISDN", 35: "AF_PHONET",
	36: "AF_IEEE802154", 37: "AF_CAIF", 38: "AF_ALG", 39: "AF_NFC", 40: "AF_VSOCK",
	41: "AF_KCM", 42: "AF_QIPCRTR", 43: "AF_SMC", 44: "AF_XDP", 45: "AF_MCTP",
}

// Socket types from <bits/socket_type.h>.
var sockTypes = map[int64]string{
	1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW", 4: "SOCK_RDM",
	5: "SOCK_SEQPACKET", 6: "SOCK_DCCP", 10: "SOCK_PACKET",
}

func sockTypeString(v uint64) string {
	v &= 0xffffffff
	s := enum(int64(v&0xf), sockTypes)
	if rest := v &^ 0xf; rest != 0 {
		s += "|" + flags(rest, sockFlags, "")
	}
	return s
}

// IP protocols from <netinet/in.h>; netlink protocols from
// <linux/netlink.h>.
var ipProtos = map[int64]string{
	0: "IPPROTO_IP", 1: "IPPROTO_ICMP", 2: "IPPROTO_IGMP", 4: "IPPROTO_IPIP",
	6: "IPPROTO_TCP", 17: "IPPROTO_UDP", 41: "IPPROTO_IPV6", 47: "IPPROTO_GRE",
	58: "IPPROTO_ICMPV6", 132: "IPPROTO_SCTP", 136: "IPPROTO_UDPLITE",
	255: "IPPROTO_RAW", 262: "IPPROTO_MPTCP",
}

var netlinkProtos = map[int64]string{
	0: "NETLINK_ROUTE", 2: "NETLINK_USERSOCK", 4: "NETLINK_SOCK_DIAG",
	6: "NETLINK_XFRM", 7: "NETLINK_SELINUX", 9: "NETLINK_AUDIT",
	10: "NETLINK_FIB_LOOKUP", 11: "NETLINK_CONNECTOR", 12: "NETLINK_NETFILTER",
	15: "NETLINK_KOBJECT_UEVENT", 16: "NETLINK_GENERIC", 21: "NETLINK_CRYPTO",
}

func sockProtoString(domain, v uint64) string {
	switch domain {
	case 2, 10:
		return enum(int64(int32(v)), ipProtos)
	case 16:
		return enum(int64(int32(v)), netlinkProtos)
	}
	return itoa(int64(int32(v)))
}

// Socket option levels and names from <asm-generic/socket.h>,
// <linux/tcp.h> and <linux/in.h>.
var sockLevels = map[int64]string{
	0: "SOL_IP", 1: "SOL_SOCKET", 6: "SOL_TCP", 17: "SOL_UDP", 41: "SOL_IPV6",
	58: "SOL_ICMPV6", 132: "SOL_SCTP", 263: "SOL_PACKET", 270: "SOL_NETLINK",
	279: "SOL_ALG", 282: "SOL_TLS", 283: "SOL_XDP",
}

var solSocketOpts = map[int64]string{
	1: "SO_DEBUG", 2: "SO_REUSEADDR", 3: "SO_TYPE", 4: "SO_ERROR", 5: "SO_DONTROUTE",
	6: "SO_BROADCAST", 7: "SO_SNDBUF", 8: "SO_RCVBUF", 9: "SO_KEEPALIVE",
	10: "SO_OOBINLINE", 11: "SO_NO_CHECK", 12: "SO_PRIORITY", 13: "SO_LINGER",
	14: "SO_BSDCOMPAT", 15: "SO_REUSEPORT", 16: "SO_PASSCRED", 17: "SO_PEERCRED",
	18: "SO_RCVLOWAT", 19: "SO_SNDLOWAT", 20: "SO_RCVTIMEO_OLD", 21: "SO_SNDTIMEO_OLD",
	25: "SO_BINDTODEVICE", 26: "SO_ATTACH_FILTER", 27: "SO_DETACH_FILTER",
	28: "SO_PEERNAME", 29: "SO_TIMESTAMP_OLD", 30: "SO_ACCEPTCONN", 31: "SO_PEERSEC",
	32: "SO_SNDBUFFORCE", 33: "SO_RCVBUFFORCE", 34: "SO_PASSSEC", 35: "SO_TIMESTAMPNS_OLD",
	36: "SO_MARK", 37: "SO_TIMESTAMPING_OLD", 38: "SO_PROTOCOL", 39: "SO_DOMAIN",
	40: "SO_RXQ_OVFL", 41: "SO_WIFI_STATUS", 42: "SO_PEEK_OFF", 43: "SO_NOFCS",
	44: "SO_LOCK_FILTER", 45: "SO_SELECT_ERR_QUEUE", 46: "SO_BUSY_POLL",
	47: "SO_MAX_PACING_RATE", 48: "SO_BPF_EXTENSIONS", 49: "SO_INCOMING_CPU",
	50: "SO_ATTACH_BPF", 51: "SO_ATTACH_REUSEPORT_CBPF", 52: "SO_ATTACH_REUSEPORT_EBPF",
	53: "SO_CNX_ADVICE", 55: "SO_MEMINFO", 56: "SO_INCOMING_NAPI_ID", 57: "SO_COOKIE",
	59: "SO_PEERGROUPS", 60: "SO_ZEROCOPY", 61: "SO_TXTIME", 62: "SO_BINDTOIFINDEX",
	63: "SO_TIMESTAMP_NEW", 64: "SO_TIMESTAMPNS_NEW", 65: "SO_TIMESTAMPING_NEW",
	66: "SO_RCVTIMEO_NEW", 67: "SO_SNDTIMEO_NEW", 68: "SO_DETACH_REUSEPORT_BPF",
	69: "SO_PREFER_BUSY_POLL", 70: "SO_BUSY_POLL_BUDGET", 71: "SO_NETNS_COOKIE",
	72: "SO_BUF_LOCK", 73: "SO_RESERVE_MEM", 74: "SO_TXREHASH", 75: "SO_RCVMARK",
}

var tcpOpts = map[int64]string{
	1: "TCP_NODELAY", 2: "TCP_MAXSEG", 3: "TCP_CORK", 4: "TCP_KEEPIDLE",
	5: "TCP_KEEPINTVL", 6: "TCP_KEEPCNT", 7: "TCP_SYNCNT", 8: "TCP_LINGER2",
	9: "TCP_DEFER_ACCEPT", 10: "TCP_WINDOW_CLAMP", 11: "TCP_INFO", 12: "TCP_QUICKACK",
	13: "TCP_CONGESTION", 14: "TCP_MD5SIG", 16: "TCP_THIN_LINEAR_TIMEOUTS",
	17: "TCP_THIN_DUPACK", 18: "TCP_USER_TIMEOUT", 19: "TCP_REPAIR",
	23: "TCP_FASTOPEN", 24: "TCP_TIMESTAMP", 25: "TCP_NOTSENT_LOWAT",
	30: "TCP_FASTOPEN_CONNECT", 31: "TCP_ULP", 36: "TCP_INQ", 37: "TCP_TX_DELAY",
}

var ipOpts = map[int64]string{
	1: "IP_TOS", 2: "IP_TTL", 3: "IP_HDRINCL", 4: "IP_OPTIONS", 8: "IP_RECVOPTS",
	10: "IP_MTU_DISCOVER", 11: "IP_RECVERR", 14: "IP_MTU", 15: "IP_FREEBIND",
	32: "IP_MULTICAST_IF", 33: "IP_MULTICAST_TTL", 34: "IP_MULTICAST_LOOP",
	35: "IP_ADD_MEMBERSHIP", 36: "IP_DROP_MEMBERSHIP",
}

var ipv6Opts = map[int64]string{
	16: "IPV6_UNICAST_HOPS", 17: "IPV6_MULTICAST_IF", 18: "IPV6_MULTICAST_HOPS",
	19: "IPV6_MULTICAST_LOOP", 20: "IPV6_ADD_MEMBERSHIP", 21: "IPV6_DROP_MEMBERSHIP",
	23: "IPV6_MTU_DISCOVER", 24: "IPV6_MTU", 25: "IPV6_RECVERR", 26: "IPV6_V6ONLY",
	49: "IPV6_RECVPKTINFO", 67: "IPV6_TCLASS",
}

func sockOptString(level, v uint64) string {
	var tab map[int64]string
	switch level {
	case 1:
		tab = solSocketOpts
	case 6:
		tab = tcpOpts
	case 0:
		tab = ipOpts
	case 41:
		tab = ipv6Opts
	}
	return enum(int64(int32(v)), tab)
}

// Message flags from <bits/socket.h>.
var msgFlags = []flag{
	{0x1, "MSG_OOB"}, {0x2, "MSG_PEEK"}, {0x4, "MSG_DONTROUTE"}, {0x8, "MSG_CTRUNC"},
	{0x10, "MSG_PROXY"}, {0x20, "MSG_TRUNC"}, {0x40, "MSG_DONTWAIT"}, {0x80, "MSG_EOR"},
	{0x100, "MSG_WAITALL"}, {0x200, "MSG_FIN"}, {0x400, "MSG_SYN"}, {0x800, "MSG_CONFIRM"},
	{0x1000, "MSG_RST"}, {0x2000, "MSG_ERRQUEUE"}, {0x4000, "MSG_NOSIGNAL"},
	{0x8000, "MSG_MORE"}, {0x10000, "MSG_WAITFORONE"}, {0x40000, "MSG_BATCH"},
	{0x4000000, "MSG_ZEROCOPY"}, {0x20000000, "MSG_FASTOPEN"}, {0x40000000, "MSG_CMSG_CLOEXEC"},
}

var shutdownHows = map[int64]string{0: "SHUT_RD", 1: "SHUT_WR", 2: "SHUT_RDWR"}

// sockaddr formats the n-byte socket address at addr:
// {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}.
func (f *fmtr) sockaddr(addr uint64, n uint64) string {
	if addr == 0 {
		return "NULL"
	}
	if n > 128 {
		n = 128 // sizeof(struct sockaddr_storage)
	}
	b, ok := f.read(addr, int(n))
	if !ok || n < 2 {
		return ptr(addr)
	}
	fam := le16(b)
	s := "{sa_family=" + enum(int64(fam), sockDomains)
	be16 := func(p []byte) uint64 { return uint64(p[0])<<8 | uint64(p[1]) }
	switch {
	case fam == 1: // AF_UNIX
		path := b[2:]
		if len(path) == 0 {
			break
		}
		if path[0] == 0 && len(path) > 1 {
			// An abstract name: the length says where it ends.
			s += ", sun_path=@" + quote(path[1:], false, false)
			break
		}
		if i := strings.IndexByte(string(path), 0); i >= 0 {
			path = path[:i]
		}
		s += ", sun_path=" + quote(path, false, false)
	case fam == 2 && n >= 8: // AF_INET
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		s += ", sin_port=htons(" + utoa(be16(b[2:])) + "), sin_addr=inet_addr(\"" + ip.String() + "\")"
	case fam == 10 && n >= 24: // AF_INET6
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		s += ", sin6_port=htons(" + utoa(be16(b[2:])) + "), sin6_flowinfo=htonl(" +
			utoa(be16(b[4:])<<16|be16(b[6:])) + "), inet_pton(AF_INET6, \"" + ip.String() + "\", &sin6_addr)"
		if n >= 28 {
			s += ", sin6_scope_id=" + utoa(uint64(le32(b[24:])))
		}
	case fam == 16 && n >= 12: // AF_NETLINK
		s += ", nl_pid=" + itoa(int64(int32(le32(b[4:])))) + ", nl_groups=" + hex8(uint64(le32(b[8:])))
	default:
		s += ", sa_data=" + quote(b[2:], false, false)
	}
	return s + "}"
}

// hex8 is v as eight hex digits.
func hex8(v uint64) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// msghdr formats a struct msghdr; data is how many bytes its iovecs
// carry (the result of recvmsg, or all for sendmsg).
func (f *fmtr) msghdr(addr uint64, data int64) string {
	if addr == 0 {
		return "NULL"
	}
	b, ok := f.read(addr, 56)
	if !ok {
		return ptr(addr)
	}
	name, namelen := le64(b[0:]), uint64(le32(b[8:]))
	iov, iovlen := le64(b[16:]), le64(b[24:])
	ctl, ctllen := le64(b[32:]), le64(b[40:])
	fl := uint64(le32(b[48:]))
	nameS := "NULL"
	if name != 0 {
		nameS = f.sockaddr(name, namelen)
	}
	ctlS := ""
	if ctllen != 0 {
		ctlS = ", msg_control=" + ptr(ctl)
	}
	return "{msg_name=" + nameS + ", msg_namelen=" + utoa(namelen) +
		", msg_iov=" + f.iovec(iov, iovlen, data) + ", msg_iovlen=" + utoa(iovlen) +
		ctlS + ", msg_controllen=" + utoa(ctllen) + ", msg_flags=" + flags(fl, msgFlags, "0") + "}"
}
