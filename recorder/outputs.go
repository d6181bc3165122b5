package recorder

import (
	"encoding/binary"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// memReader reads guest memory.
type memReader func(addr uint64, b []byte) error

// maxOutput bounds one recorded output buffer.
const maxOutput = 64 << 20

// outputs returns the guest memory a finished call with result res wrote,
// as replay must write it back: the bytes read, the addresses, lengths and
// flags the kernel filled in.
func outputs(nr int, a [6]uint64, res int64, read memReader) []trace.MemWrite {
	var o outs
	o.read = read
	switch nr {
	case abi.SYS_READ, abi.SYS_PREAD64:
		o.add(a[1], res)
	case abi.SYS_READV, abi.SYS_PREADV, abi.SYS_PREADV2:
		o.iovecs(a[1], a[2], res)
	case abi.SYS_RECVFROM:
		o.add(a[1], res)
		o.sockaddr(a[4], a[5])
	case abi.SYS_RECVMSG:
		o.msghdr(a[1], res)
	case abi.SYS_RECVMMSG:
		o.mmsghdrs(a[1], res, true)
		o.add(a[4], 16) // the time left
	case abi.SYS_SENDMMSG:
		o.mmsghdrs(a[1], res, false)
	case abi.SYS_GETSOCKNAME, abi.SYS_GETPEERNAME, abi.SYS_ACCEPT, abi.SYS_ACCEPT4:
		o.sockaddr(a[1], a[2])
	case abi.SYS_GETSOCKOPT:
		o.getsockopt(a)
	case abi.SYS_SETSOCKOPT:
		o.setsockopt(a)
	case abi.SYS_CAPGET:
		o.capget(a[0], a[1], res)
	case abi.SYS_IOCTL:
		o.ioctl(a[1], a[2])
	case abi.SYS_POLL:
		o.add(a[0], 8*int64(a[1]))
	case abi.SYS_PPOLL:
		o.add(a[0], 8*int64(a[1]))
		o.add(a[2], 16)
	case abi.SYS_SELECT, abi.SYS_PSELECT6:
		n := (int64(int32(a[0])) + 63) / 64 * 8
		for _, p := range a[1:4] {
			o.add(p, n)
		}
		o.add(a[4], 16)
	case abi.SYS_EPOLL_WAIT, abi.SYS_EPOLL_PWAIT, abi.SYS_EPOLL_PWAIT2:
		o.add(a[1], 12*res)
	case abi.SYS_READLINK:
		o.add(a[1], res)
	case abi.SYS_READLINKAT:
		o.add(a[2], res)
	case abi.SYS_STATFS, abi.SYS_FSTATFS:
		o.add(a[1], 120)
	case abi.SYS_GETXATTR, abi.SYS_LGETXATTR, abi.SYS_FGETXATTR:
		if a[3] != 0 {
			o.add(a[2], res)
		}
	case abi.SYS_LISTXATTR, abi.SYS_LLISTXATTR, abi.SYS_FLISTXATTR:
		if a[2] != 0 {
			o.add(a[1], res)
		}
	}
	return o.mem
}

type outs struct {
	read memReader
	mem  []trace.MemWrite
}

// add keeps n bytes at addr (nothing for a null address or a bad length).
func (o *outs) add(addr uint64, n int64) {
	if addr == 0 || n <= 0 || n > maxOutput {
		return
	}
	b := make([]byte, n)
	if o.read(addr, b) != nil {
		return
	}
	o.mem = append(o.mem, trace.MemWrite{Addr: addr, Data: b})
}

func (o *outs) u64(addr uint64) (uint64, bool) {
	var b [8]byte
	if addr == 0 || o.read(addr, b[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// sockaddr keeps a socklen_t at lenp and the address it sizes.
func (o *outs) sockaddr(addr, lenp uint64) {
	var b [4]byte
	if lenp == 0 || o.read(lenp, b[:]) != nil {
		return
	}
	o.add(lenp, 4)
	o.add(addr, int64(min(binary.LittleEndian.Uint32(b[:]), 4096)))
}

// iovecs keeps the first n bytes of the cnt buffers of the iovec array.
func (o *outs) iovecs(iov, cnt uint64, n int64) {
	for i := uint64(0); i < cnt && i < 1024 && n > 0; i++ {
		base, ok1 := o.u64(iov + 16*i)
		size, ok2 := o.u64(iov + 16*i + 8)
		if !ok1 || !ok2 {
			return
		}
		k := min(int64(size), n)
		o.add(base, k)
		n -= k
	}
}

// msghdr keeps what recvmsg fills in: the header (name length, control
// length, flags), the name, the data and the control messages.
func (o *outs) msghdr(p uint64, n int64) {
	if n < 0 {
		return
	}
	var h [56]byte
	if o.read(p, h[:]) != nil {
		return
	}
	o.add(p, 56)
	le := binary.LittleEndian
	o.add(le.Uint64(h[0:]), int64(le.Uint32(h[8:])))
	o.iovecs(le.Uint64(h[16:]), le.Uint64(h[24:]), n)
	o.add(le.Uint64(h[32:]), int64(le.Uint64(h[40:])))
}

// mmsghdrs keeps what recvmmsg (recv) or sendmmsg filled in the first n
// entries of the struct mmsghdr array at vec: each message's msg_len, and
// for recvmmsg its header and bytes.
func (o *outs) mmsghdrs(vec uint64, n int64, recv bool) {
	const size, lenOff = 64, 56 // struct mmsghdr, and its msg_len
	for i := int64(0); i < n && i < 1024; i++ {
		p := vec + uint64(i*size)
		if recv {
			var b [4]byte
			if o.read(p+lenOff, b[:]) != nil {
				return
			}
			o.msghdr(p, int64(binary.LittleEndian.Uint32(b[:])))
		}
		o.add(p+lenOff, 4)
	}
}
