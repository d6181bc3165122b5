package gdbstub

import "encoding/binary"

// The amd64 registers in gdb's numbering, which is also the order of a 'g'
// reply and of target.xml. They are exactly the registers the annexes in
// xml.go describe: a 'g' reply longer than target.xml says panics Delve.

// regInfo describes one register.
type regInfo struct {
	name string
	size int // bytes
}

// Register numbers of note.
const (
	regRBP    = 6
	regRSP    = 7
	regRIP    = 16
	regEflags = 17
	regCS     = 18
	regST0    = 24
	regFctrl  = 32
	regXMM0   = 40
	regMXCSR  = 56
	regOrigAX = 57
	regFSBase = 58
	regGSBase = 59
	numRegs   = 60 // without AVX
	// regYMM0H…: the upper halves of ymm0–15 (64bit-avx.xml), for a
	// target whose registers have them.
	regYMM0H   = 60
	numAVXRegs = 76
)

var amd64Regs = [numAVXRegs]regInfo{
	{"rax", 8}, {"rbx", 8}, {"rcx", 8}, {"rdx", 8},
	{"rsi", 8}, {"rdi", 8}, {"rbp", 8}, {"rsp", 8},
	{"r8", 8}, {"r9", 8}, {"r10", 8}, {"r11", 8},
	{"r12", 8}, {"r13", 8}, {"r14", 8}, {"r15", 8},
	{"rip", 8}, {"eflags", 4},
	{"cs", 4}, {"ss", 4}, {"ds", 4}, {"es", 4}, {"fs", 4}, {"gs", 4},
	{"st0", 10}, {"st1", 10}, {"st2", 10}, {"st3", 10},
	{"st4", 10}, {"st5", 10}, {"st6", 10}, {"st7", 10},
	{"fctrl", 4}, {"fstat", 4}, {"ftag", 4}, {"fiseg", 4},
	{"fioff", 4}, {"foseg", 4}, {"fooff", 4}, {"fop", 4},
	{"xmm0", 16}, {"xmm1", 16}, {"xmm2", 16}, {"xmm3", 16},
	{"xmm4", 16}, {"xmm5", 16}, {"xmm6", 16}, {"xmm7", 16},
	{"xmm8", 16}, {"xmm9", 16}, {"xmm10", 16}, {"xmm11", 16},
	{"xmm12", 16}, {"xmm13", 16}, {"xmm14", 16}, {"xmm15", 16},
	{"mxcsr", 4},
	{"orig_rax", 8},
	{"fs_base", 8}, {"gs_base", 8},
	{"ymm0h", 16}, {"ymm1h", 16}, {"ymm2h", 16}, {"ymm3h", 16},
	{"ymm4h", 16}, {"ymm5h", 16}, {"ymm6h", 16}, {"ymm7h", 16},
	{"ymm8h", 16}, {"ymm9h", 16}, {"ymm10h", 16}, {"ymm11h", 16},
	{"ymm12h", 16}, {"ymm13h", 16}, {"ymm14h", 16}, {"ymm15h", 16},
}

// FXSAVE area offsets (Intel SDM vol. 1, table 10-2, 64-bit format as
// gdb's i387_supply_fxsave reads it).
const (
	fxFCW   = 0
	fxFSW   = 2
	fxFTW   = 4 // the abridged tag byte: one bit per physical register
	fxFOP   = 6
	fxFIP   = 8
	fxFCS   = 12
	fxFDP   = 16
	fxFDS   = 20
	fxMXCSR = 24
	fxST0   = 32  // 16 bytes per register, 10 used
	fxXMM0  = 160 // 16 bytes per register
)

// isFP tells whether register n comes from the FXSAVE area.
func isFP(n int) bool { return n >= regST0 && n <= regMXCSR }

// appendRegValue appends register n's value in target byte order (little
// endian) to dst; nothing when n is out of range.
func appendRegValue(dst []byte, r *Registers, n int) []byte {
	le := binary.LittleEndian
	fx := r.FXSave[:]
	u16 := func(off int) uint32 { return uint32(le.Uint16(fx[off:])) }
	switch {
	case n < regRIP:
		gp := [16]uint64{r.Rax, r.Rbx, r.Rcx, r.Rdx, r.Rsi, r.Rdi, r.Rbp, r.Rsp,
			r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15}
		return le.AppendUint64(dst, gp[n])
	case n == regRIP:
		return le.AppendUint64(dst, r.Rip)
	case n == regEflags:
		return le.AppendUint32(dst, uint32(r.Eflags))
	case n < regST0:
		seg := [6]uint64{r.Cs, r.Ss, r.Ds, r.Es, r.Fs, r.Gs}
		return le.AppendUint32(dst, uint32(seg[n-regCS]))
	case n < regFctrl:
		off := fxST0 + 16*(n-regST0)
		return append(dst, fx[off:off+10]...)
	case n < regXMM0:
		var v uint32
		switch n - regFctrl {
		case 0:
			v = u16(fxFCW)
		case 1:
			v = u16(fxFSW)
		case 2:
			v = fullTagWord(r.FXSave)
		case 3:
			v = u16(fxFCS)
		case 4:
			v = le.Uint32(fx[fxFIP:])
		case 5:
			v = u16(fxFDS)
		case 6:
			v = le.Uint32(fx[fxFDP:])
		case 7:
			v = u16(fxFOP) & 0x7ff
		}
		return le.AppendUint32(dst, v)
	case n < regMXCSR:
		off := fxXMM0 + 16*(n-regXMM0)
		return append(dst, fx[off:off+16]...)
	case n == regMXCSR:
		return append(dst, fx[fxMXCSR:fxMXCSR+4]...)
	case n == regOrigAX:
		return le.AppendUint64(dst, r.OrigRax)
	case n == regFSBase:
		return le.AppendUint64(dst, r.FsBase)
	case n == regGSBase:
		return le.AppendUint64(dst, r.GsBase)
	case n < numAVXRegs:
		return append(dst, r.YMMHigh[n-regYMM0H][:]...)
	}
	return dst
}

// appendRegHex appends register n as hex, or as "xx"s when it is an
// x87/SSE register and r has no FXSAVE area, or an AVX one and r has no
// AVX state.
func appendRegHex(dst []byte, r *Registers, n int) []byte {
	if isFP(n) && !r.HaveFP || n >= regYMM0H && !r.HaveAVX {
		for range 2 * amd64Regs[n].size {
			dst = append(dst, 'x')
		}
		return dst
	}
	var buf [16]byte
	return appendHex(dst, appendRegValue(buf[:0], r, n))
}

// appendAllRegsHex appends the 'g' reply for r: its first count
// registers (numRegs, or numAVXRegs when target.xml said AVX).
func appendAllRegsHex(dst []byte, r *Registers, count int) []byte {
	for n := range count {
		dst = appendRegHex(dst, r, n)
	}
	return dst
}

// fullTagWord rebuilds the x87 tag word (two bits per physical register:
// 0 valid, 1 zero, 2 special, 3 empty) from FXSAVE's abridged tag byte,
// classifying each non-empty register by its contents as gdb's
// i387_supply_fxsave does.
func fullTagWord(fx [512]byte) uint32 {
	abridged := fx[fxFTW]
	top := int(fx[fxFSW+1]>>3) & 7
	var tw uint32
	for phys := 7; phys >= 0; phys-- {
		tag := uint32(3)
		if abridged&(1<<phys) != 0 {
			st := (phys + 8 - top) % 8 // the ST(i) this physical register is
			off := fxST0 + 16*st
			tag = x87Tag(fx[off : off+10])
		}
		tw |= tag << (2 * phys)
	}
	return tw
}

// x87Tag classifies an 80-bit extended value: 0 valid, 1 zero, 2 special
// (NaN, infinity, denormal or unnormal).
func x87Tag(raw []byte) uint32 {
	exponent := uint16(raw[9]&0x7f)<<8 | uint16(raw[8])
	integer := raw[7]&0x80 != 0
	fraction := binary.LittleEndian.Uint64(raw[0:8]) &^ (1 << 63)
	switch {
	case exponent == 0x7fff:
		return 2
	case exponent == 0:
		if fraction == 0 && !integer {
			return 1
		}
		return 2
	case integer:
		return 0
	}
	return 2
}
