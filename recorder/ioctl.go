package recorder

import "encoding/binary"

// What an ioctl writes at its argument, so that replay can write it back
// when it stands in for a call on a terminal or socket of the outside
// world.
//
// A request made with _IOR or _IOWR says so itself: direction bit _IOC_READ
// and the size of what the kernel copies out (<asm-generic/ioctl.h>). The
// older requests (terminals, sockets, block devices) predate the encoding
// and are listed in legacyIoctls with the size of their structure as the
// x86-64 kernel lays it out. A few write through pointers inside their
// argument (SIOCGIFCONF, SIOCGIFBR): outs.ioctl follows those.

// Encoding of ioctl requests (<asm-generic/ioctl.h>).
const (
	iocSizeShift = 16
	iocSizeMask  = 0x3fff
	iocDirShift  = 30
	iocRead      = 2
)

// Requests whose argument points to further output (<linux/sockios.h>,
// <linux/if_bridge.h>).
const (
	siocgifconf      = 0x8912
	siocgifbr        = 0x8940
	brctlGetBridges  = 1
	maxBridgeIndices = 1024
)

// Structure sizes on x86-64.
const (
	sizeofTermios  = 36 // struct termios of the kernel: 4 flags, c_line, c_cc[19]
	sizeofTermio   = 18
	sizeofIfreq    = 40
	sizeofIwreq    = 32
	sizeofArpreq   = 68
	sizeofTimeval  = 16
	sizeofIfconf   = 16
	sizeofLoopInfo = 232 // struct loop_info64
)

// legacyIoctls maps the requests that do not encode their size to the
// bytes they write at their argument.
var legacyIoctls = map[uint32]int64{
	// Terminals (<asm-generic/ioctls.h>).
	0x5401: sizeofTermios, // TCGETS
	0x5405: sizeofTermio,  // TCGETA
	0x540f: 4,             // TIOCGPGRP
	0x5411: 4,             // TIOCOUTQ, SIOCOUTQ
	0x5413: 8,             // TIOCGWINSZ
	0x5415: 4,             // TIOCMGET
	0x5419: 4,             // TIOCGSOFTCAR
	0x541b: 4,             // FIONREAD, TIOCINQ, SIOCINQ
	0x541e: 72,            // TIOCGSERIAL: struct serial_struct
	0x5424: 4,             // TIOCGETD
	0x5429: 4,             // TIOCGSID
	0x542e: 32,            // TIOCGRS485: struct serial_rs485
	0x5432: 16,            // TCGETX: struct termiox
	0x5456: sizeofTermios, // TIOCGLCKTRMIOS
	0x5459: 4,             // TIOCSERGETLSR
	0x545d: 80,            // TIOCGICOUNT: struct serial_icounter_struct
	0x5460: 8,             // FIOQSIZE: loff_t

	// Virtual consoles and keyboards (<linux/vt.h>, <linux/kd.h>).
	0x5600: 4, // VT_OPENQRY
	0x5601: 8, // VT_GETMODE: struct vt_mode
	0x5603: 6, // VT_GETSTATE: struct vt_stat
	0x4b31: 1, // KDGETLED
	0x4b33: 1, // KDGKBTYPE
	0x4b3b: 4, // KDGETMODE
	0x4b44: 4, // KDGKBMODE
	0x4b62: 4, // KDGKBMETA
	0x4b64: 1, // KDGKBLED

	// Files and block devices (<linux/fs.h>).
	0x0001: 4,              // FIBMAP
	0x0002: 4,              // FIGETBSZ
	0x125e: 4,              // BLKROGET
	0x1260: 8,              // BLKGETSIZE
	0x1263: 8,              // BLKRAGET
	0x1265: 8,              // BLKFRAGET
	0x1267: 2,              // BLKSECTGET
	0x1268: 4,              // BLKSSZGET
	0x1278: 4,              // BLKIOMIN
	0x1279: 4,              // BLKIOOPT
	0x127a: 4,              // BLKALIGNOFF
	0x127b: 4,              // BLKPBSZGET
	0x127c: 4,              // BLKDISCARDZEROES
	0x127e: 2,              // BLKROTATIONAL
	0x4c05: sizeofLoopInfo, // LOOP_GET_STATUS64

	// Sockets (<linux/sockios.h>, <asm-generic/sockios.h>).
	0x8903: 4,             // FIOGETOWN
	0x8904: 4,             // SIOCGPGRP
	0x8905: 4,             // SIOCATMARK
	0x8906: sizeofTimeval, // SIOCGSTAMP
	0x8907: sizeofTimeval, // SIOCGSTAMPNS
	0x8910: sizeofIfreq,   // SIOCGIFNAME
	0x8913: sizeofIfreq,   // SIOCGIFFLAGS
	0x8915: sizeofIfreq,   // SIOCGIFADDR
	0x8917: sizeofIfreq,   // SIOCGIFDSTADDR
	0x8919: sizeofIfreq,   // SIOCGIFBRDADDR
	0x891b: sizeofIfreq,   // SIOCGIFNETMASK
	0x891d: sizeofIfreq,   // SIOCGIFMETRIC
	0x891f: sizeofIfreq,   // SIOCGIFMEM
	0x8921: sizeofIfreq,   // SIOCGIFMTU
	0x8925: sizeofIfreq,   // SIOCGIFENCAP
	0x8927: sizeofIfreq,   // SIOCGIFHWADDR
	0x8929: sizeofIfreq,   // SIOCGIFSLAVE
	0x8933: sizeofIfreq,   // SIOCGIFINDEX
	0x8935: sizeofIfreq,   // SIOCGIFPFLAGS
	0x8938: sizeofIfreq,   // SIOCGIFCOUNT
	0x8942: sizeofIfreq,   // SIOCGIFTXQLEN
	0x8946: sizeofIfreq,   // SIOCETHTOOL (the header only)
	0x8947: sizeofIfreq,   // SIOCGMIIPHY
	0x8948: sizeofIfreq,   // SIOCGMIIREG
	0x894b: 4,             // SIOCOUTQNSD
	0x8954: sizeofArpreq,  // SIOCGARP
	0x8961: sizeofArpreq,  // SIOCGRARP
	0x8970: sizeofIfreq,   // SIOCGIFMAP
	0x8982: 56,            // SIOCGIFVLAN: struct vlan_ioctl_args
	0x89b1: sizeofIfreq,   // SIOCGHWTSTAMP
}

// Requests that change only the descriptor or its open file description
// (O_NONBLOCK, O_ASYNC, close-on-exec), the same on whatever file it is:
// replay makes them for real, on its stand-in too, so that fcntl's
// F_GETFL and F_GETFD there say what they said in the recording.
var fdFlagIoctls = map[uint32]bool{
	0x5421: true, // FIONBIO
	0x5450: true, // FIONCLEX
	0x5451: true, // FIOCLEX
	0x5452: true, // FIOASYNC
}

// tiocgptpeer is TIOCGPTPEER, which opens the slave of a pty master.
const tiocgptpeer = 0x5441

// Requests that return a new descriptor: replay stands in for it
// (ResultStandIn), as for a terminal the guest opens. arg holds the new
// descriptor's open flags.
var fdIoctls = map[uint32]bool{
	tiocgptpeer: true, // the slave of a pty master
	0x894c:      true, // SIOCGSKNS: the network namespace of a socket
}

// ioctlSize returns how many bytes ioctl request req writes at its
// argument: the size of a legacy request's structure, or the size encoded
// in an _IOR or _IOWR request; 0 when it writes nothing there (or hermit
// does not know).
func ioctlSize(req uint64) int64 {
	r := uint32(req)
	if n, ok := legacyIoctls[r]; ok {
		return n
	}
	switch {
	case r >= 0x89f0 && r <= 0x89ff: // SIOCDEVPRIVATE..+15: struct ifreq
		return sizeofIfreq
	case r >= 0x8b00 && r <= 0x8bff && r&1 != 0: // wireless SIOCGIW*: struct iwreq
		return sizeofIwreq
	}
	if (r>>iocDirShift)&iocRead != 0 {
		return int64((r >> iocSizeShift) & iocSizeMask)
	}
	return 0
}

// ioctl keeps what request req wrote at arg and through it.
func (o *outs) ioctl(req, arg uint64) {
	switch uint32(req) {
	case siocgifconf:
		// struct ifconf { int ifc_len; char *ifc_buf; }: the kernel sets
		// ifc_len to the bytes it wrote at ifc_buf (none if it is null).
		var h [sizeofIfconf]byte
		if arg == 0 || o.read(arg, h[:]) != nil {
			return
		}
		o.add(arg, sizeofIfconf)
		o.add(binary.LittleEndian.Uint64(h[8:]), int64(int32(binary.LittleEndian.Uint32(h[:]))))
		return
	case siocgifbr:
		// unsigned long args[3]: BRCTL_GET_BRIDGES writes args[2] ints
		// at args[1].
		var a [24]byte
		if arg == 0 || o.read(arg, a[:]) != nil {
			return
		}
		le := binary.LittleEndian
		if le.Uint64(a[:]) == brctlGetBridges {
			o.add(le.Uint64(a[8:]), 4*int64(min(le.Uint64(a[16:]), maxBridgeIndices)))
		}
		return
	}
	o.add(arg, ioctlSize(req))
}
