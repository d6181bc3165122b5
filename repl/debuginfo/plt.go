package debuginfo

import (
	"debug/elf"
)

// pltSymbols synthesizes "name@plt" symbols for the entries of .plt,
// .plt.sec and .plt.got, as objdump and gdb show them: each entry's
// "jmp *disp(%rip)" reads a GOT slot, and the dynamic relocation of that
// slot names the function.
func (m *module) pltSymbols() []sym {
	slots := map[uint64]string{}
	_ = guard(func() {
		dyn, err := m.f.DynamicSymbols()
		if err != nil {
			return
		}
		for _, name := range []string{".rela.plt", ".rela.dyn"} {
			sec := m.f.Section(name)
			if sec == nil || sec.Type != elf.SHT_RELA || sec.Size > maxSection {
				continue
			}
			b, err := sec.Data()
			if err != nil {
				continue
			}
			for off := 0; off+24 <= len(b) && len(slots) < maxSymbols; off += 24 {
				where, info := le.Uint64(b[off:]), le.Uint64(b[off+8:])
				typ, idx := elf.R_X86_64(info&0xffffffff), info>>32
				if (typ == elf.R_X86_64_JMP_SLOT || typ == elf.R_X86_64_GLOB_DAT) && idx >= 1 && idx-1 < uint64(len(dyn)) {
					slots[where] = dyn[idx-1].Name
				}
			}
		}
	})
	if len(slots) == 0 {
		return nil
	}
	var out []sym
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		sec := m.f.Section(name)
		if sec == nil || sec.Type != elf.SHT_PROGBITS || sec.Size > 1<<24 {
			continue
		}
		b, err := sec.Data()
		if err != nil {
			continue
		}
		ent := sec.Entsize
		if ent != 8 && ent != 16 {
			ent = 16
		}
		for off := uint64(0); off+ent <= uint64(len(b)); off += ent {
			e := b[off : off+ent]
			for i := 0; i+6 <= len(e); i++ {
				if e[i] != 0xff || e[i+1] != 0x25 {
					continue
				}
				next := sec.Addr + off + uint64(i) + 6
				slot := next + uint64(int64(int32(le.Uint32(e[i+2:]))))
				if fn, ok := slots[slot]; ok && fn != "" {
					out = append(out, sym{addr: sec.Addr + off, size: ent, name: fn + "@plt"})
				}
				break
			}
		}
	}
	return out
}
