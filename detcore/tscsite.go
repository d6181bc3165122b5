package detcore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"slices"
)

// rdtsc without a stop. A trapped rdtsc or rdtscp costs a ptrace stop and
// its answer (emulateInsn). In a process with a clock page that has fast
// writes, the engine has the site of an rdtsc it answered patched
// (FastWrites.TSCSite): it jumps to a stub that reads the time-stamp
// counter from the page, as the clock functions read the time
// (detcore/ptrace/testdata/fastio.S: fio_tsc), advancing the page's clock
// by a step, and traps as before when the page cannot answer (the clock at
// its limit, or the page's TSC word clear: the thread's rdtsc must fault
// for the guest, or a guest's tracer follows it). A read there gives what
// a trapped one would: the clock moves on by tscStep.
//
// A site that runs once per process (glibc's loader times itself with 8
// rdtsc at every start) gains nothing from that, so the engine also learns
// the sites by their offset in the ELF image they lie in, an image being
// known by its build id: at every exec, the sites learned in the new
// program's interpreter and executable are patched before it runs. What is
// learned depends only on the traps the programs made before, and what is
// patched on the images' bytes, so both are the same in every run, record
// and replay. A recording of journal version 25 or before patched nothing
// (Config.OldTSCTraps).

// Offsets in a clock page with fast writes (fastio.S).
const (
	vcTSC      = 0x148 // the step of an rdtsc read in the page, 0: it traps
	vcTSCReads = 0x150 // rdtsc and rdtscp answered there
)

// TSCSiteBefore and TSCSiteAfter bound the code the tracer gets around an
// rdtsc at pc to decide whether its site can be patched, [pc -
// TSCSiteBefore, pc + TSCSiteAfter): the instruction, those its jmp
// replaces, and the code around them, from which no jump may lead between
// them (Go's runtime.cputicks jumps to the instruction after its rdtscp
// from its other path).
const (
	TSCSiteBefore = 1024
	TSCSiteAfter  = 512
)

// tscSiteBytes is how many bytes from its rdtsc a learned site keeps.
const tscSiteBytes = 24

// maxLearned bounds the sites learned in all images.
const maxLearned = 4096

// image is an ELF image the kernel mapped at a process's exec.
type image struct {
	// hdr is where its ELF header is, if anywhere; key is its build id
	// ("" if none was found), and [start, end) the addresses its
	// segments span, once looked up (known).
	hdr        uint64
	known      bool
	key        string
	start, end uint64
}

// tscWord is the page's TSC word for t: the step an rdtsc read there
// moves the clock on by, as a trapped one does (readTSC), or 0 where its
// rdtsc must trap.
func (e *Engine) tscWord(t *thread) uint64 {
	if e.cfg.TrapTSC && !e.cfg.OldTSCTraps && !e.cfg.NoFastIO && t.tscMode != prTSCSigsegv && t.pt == nil {
		return tscStep
	}
	return 0
}

// patchTSC has the site of the rdtsc or rdtscp at pc that t traps on,
// not yet answered, patched, and learns it; it reports whether it did.
//
// The jmp covers the instructions after the rdtsc too, so no thread may
// ever come back between them: none gets there but by an rdtsc at pc,
// which patches the site at its first trap, unless the thread could not
// read the page (its TSC word 0: a guest's tracer follows it; or the
// guest's own PR_TSC_SIGSEGV, noTSCSite). A site that such an rdtsc left
// a thread after (which may be in a signal handler that returns there)
// is never patched in its process.
func (e *Engine) patchTSC(t *thread, pc uint64) bool {
	c := t.proc.clock
	if c == nil || c.fast == nil || c.fast.TSCSite == nil || e.tscWord(t) == 0 || pc < TSCSiteBefore {
		return false
	}
	k := siteKey{pc: pc, tsc: true}
	for _, o := range e.threads {
		if o.proc.mm == t.proc.mm && o.tscLeft > pc && o.tscLeft < pc+tscSiteBytes {
			c.noSite(k)
			return false
		}
	}
	var code []byte
	read := func() []byte {
		code = e.readAround(t.tid, pc)
		return code
	}
	if !e.patchCode(t.tid, c, k, read, c.fast.TSCSite) {
		return false
	}
	e.result.Stats.TSCSites++
	for i := range t.proc.images {
		im := &t.proc.images[i]
		e.lookImage(t.tid, im)
		if im.key != "" && pc >= im.start && pc < im.end {
			s := learnedSite{off: pc - im.start}
			copy(s.code[:], code[TSCSiteBefore:])
			e.learnTSC(im.key, s)
			break
		}
	}
	return true
}

// readAround reads the code around the rdtsc at pc in tid's memory, as
// TSCSite takes it, page by page: a page that cannot be read holds no
// code that could jump to the site, and reads as nops; nil if the site's
// own bytes cannot be read.
func (e *Engine) readAround(tid int, pc uint64) []byte {
	code := make([]byte, TSCSiteBefore+TSCSiteAfter)
	from := pc - TSCSiteBefore
	for off := 0; off < len(code); {
		n := min(len(code)-off, int(elfPage-(from+uint64(off))%elfPage))
		if e.t.ReadMem(tid, from+uint64(off), code[off:off+n]) != nil {
			if off+n > TSCSiteBefore && off < TSCSiteBefore+tscSiteBytes {
				return nil
			}
			for i := off; i < off+n; i++ {
				code[i] = 0x90
			}
		}
		off += n
	}
	return code
}

// noTSCSite keeps the rdtsc site at pc, where t faults for the guest
// (its own PR_TSC_SIGSEGV), from being patched in its process: a handler
// that steps over the instruction returns after it, where the jmp would
// be.
func (e *Engine) noTSCSite(t *thread, pc uint64) {
	if c := t.proc.clock; c != nil && c.fast != nil {
		c.noSite(siteKey{pc: pc, tsc: true})
	}
}

// learnedSite is an rdtsc site learned in an image: its offset, and the
// code there before it was patched, which a site in another program must
// have to be patched.
type learnedSite struct {
	off  uint64
	code [tscSiteBytes]byte
}

// InHermitStub reports whether pc, in guest thread tid's process, lies in
// hermit's code for its patched sites (the fast page's code and the
// sites' stubs, in either copy), where a patched site's jmp leads. Call it
// only from the Run goroutine.
func (e *Engine) InHermitStub(tid int, pc uint64) bool {
	t := e.threads[tid]
	return t != nil && t.proc.clock != nil && t.proc.clock.inStubs(pc)
}

// learnTSC adds site s of the image known by key.
func (e *Engine) learnTSC(key string, s learnedSite) {
	if e.tscLearned == nil {
		e.tscLearned = make(map[string][]learnedSite)
	}
	if e.tscLearnedN >= maxLearned {
		return
	}
	for _, o := range e.tscLearned[key] {
		if o.off == s.off {
			return
		}
	}
	e.tscLearned[key] = append(e.tscLearned[key], s)
	e.tscLearnedN++
}

// execImages gives p, which thread tid has just exec'd, its images, and
// patches the rdtsc sites learned in them.
func (e *Engine) execImages(p *process, tid int, x Exec) {
	p.images = p.images[:0]
	for _, h := range x.Images {
		if h != 0 {
			p.images = append(p.images, image{hdr: h})
		}
	}
	c := p.clock
	if len(e.tscLearned) == 0 || c == nil || c.fast == nil || c.fast.TSCSite == nil {
		return
	}
	t := e.threads[tid]
	if t == nil || e.tscWord(t) == 0 {
		return
	}
	for i := range p.images {
		im := &p.images[i]
		e.lookImage(tid, im)
		if sites := e.tscLearned[im.key]; len(sites) > 0 {
			e.result.Stats.TSCSites += int64(patchAll(e.t, e.writeCode, tid, im.start, sites, c.fast.TSCSite))
		}
	}
}

// memReader reads a guest's memory (a Tracer).
type memReader interface {
	ReadMem(tid int, addr uint64, b []byte) error
}

// maxPatchSpan bounds the code patchAll reads and writes at once.
const maxPatchSpan = 256 << 10

// patchAll patches the sites at their offsets from start in thread tid's
// memory, as site says, where the code is still what it was where each
// was learned, and returns how many it patched. Writing code
// costs the kernel a copy of each page, and the tracer a stop's worth of
// calls (the page is not writable: process_vm_writev refuses it), so the
// sites' pages are read and written back in one piece, with every site
// patched in it.
func patchAll(tr memReader, write func(tid int, at uint64, b []byte, jmps [][2]uint64) error, tid int, start uint64, sites []learnedSite, site func(pc uint64, code []byte) (uint64, []byte, bool)) int {
	lo, hi := sites[0].off, sites[0].off
	for _, s := range sites {
		lo, hi = min(lo, s.off), max(hi, s.off)
	}
	if lo < TSCSiteBefore {
		return 0
	}
	lo, hi = lo-TSCSiteBefore, hi+TSCSiteAfter
	if hi-lo > maxPatchSpan {
		return 0
	}
	code := make([]byte, hi-lo)
	base := start + lo
	if tr.ReadMem(tid, base, code) != nil {
		return 0
	}
	n := 0
	from, to := uint64(len(code)), uint64(0)
	var jmps [][2]uint64
	for _, s := range slices.SortedFunc(slices.Values(sites), func(a, b learnedSite) int { return cmp.Compare(a.off, b.off) }) {
		o := s.off - lo // in code
		if n > 0 && o < to || !bytes.Equal(code[o:o+tscSiteBytes], s.code[:]) {
			continue // within the patch before, or other code than the learned
		}
		at, b, ok := site(start+s.off, code[o-TSCSiteBefore:o+TSCSiteAfter])
		if !ok || at < base || at+uint64(len(b)) > base+uint64(len(code)) {
			continue
		}
		copy(code[at-base:], b)
		from, to = min(from, at-base), max(to, at-base+uint64(len(b)))
		jmps = append(jmps, [2]uint64{at, uint64(len(b))})
		n++
	}
	if n == 0 || write(tid, base+from, code[from:to], jmps) != nil {
		return 0
	}
	return n
}

// lookImage finds im's build id and extent, once, from the guest's memory
// (through the Tracer, as the guest sees it).
func (e *Engine) lookImage(tid int, im *image) {
	if im.known {
		return
	}
	im.known = true
	read := func(addr uint64, n int) []byte {
		b := make([]byte, n)
		if e.t.ReadMem(tid, addr, b) != nil {
			return nil
		}
		return b
	}
	im.key, im.start, im.end = elfImage(read, im.hdr)
}

// ELF64 constants elfImage reads.
const (
	elfPTLoad     = 1
	elfPTNote     = 4
	elfNTBuildID  = 3
	elfPhdrSize   = 56
	elfMaxPhdrs   = 64
	elfMaxNote    = 4096
	elfHeaderSize = 64
	elfPage       = 4096
)

// elfImage reads the ELF image whose header read finds at hdr: its build
// id as a key ("" if it has none, or hdr holds no ELF64 header) and the
// addresses its loaded segments span.
func elfImage(read func(addr uint64, n int) []byte, hdr uint64) (key string, start, end uint64) {
	// The header's page holds the program headers, and often the notes:
	// one read, where the header is at a page's start (as mapped).
	page := read(hdr, int(elfPage-hdr%elfPage))
	// at returns n bytes at addr, from page if it has them.
	at := func(addr uint64, n int) []byte {
		if addr >= hdr && addr+uint64(n) <= hdr+uint64(len(page)) {
			return page[addr-hdr : addr-hdr+uint64(n)]
		}
		return read(addr, n)
	}
	h := at(hdr, elfHeaderSize)
	if h == nil || string(h[:4]) != "\x7fELF" || h[4] != 2 || h[5] != 1 {
		return "", 0, 0
	}
	le := binary.LittleEndian
	phoff, phentsize, phnum := le.Uint64(h[0x20:]), le.Uint16(h[0x36:]), le.Uint16(h[0x38:])
	if phentsize != elfPhdrSize || phnum == 0 || phnum > elfMaxPhdrs || phoff > 1<<20 {
		return "", 0, 0
	}
	ph := at(hdr+phoff, int(phnum)*elfPhdrSize)
	if ph == nil {
		return "", 0, 0
	}
	// The header is at the first loaded segment's start: the bias is
	// what its addresses are moved by.
	var bias uint64
	first := true
	var notes [][2]uint64
	for i := 0; i < int(phnum); i++ {
		p := ph[i*elfPhdrSize:]
		typ, off, vaddr, filesz, memsz := le.Uint32(p), le.Uint64(p[8:]), le.Uint64(p[16:]), le.Uint64(p[32:]), le.Uint64(p[40:])
		switch typ {
		case elfPTLoad:
			if first {
				if off != 0 || vaddr > hdr {
					return "", 0, 0
				}
				bias, start, first = hdr-vaddr, hdr, false
			}
			end = max(end, bias+vaddr+memsz)
		case elfPTNote:
			notes = append(notes, [2]uint64{vaddr, min(filesz, elfMaxNote)})
		}
	}
	if first {
		return "", 0, 0
	}
	for _, n := range notes {
		b := at(bias+n[0], int(n[1]))
		if id := buildID(b); id != "" {
			return "build-id " + id, start, end
		}
	}
	return "", 0, 0
}

// buildID finds the GNU build id in notes, a PT_NOTE segment's bytes.
func buildID(notes []byte) string {
	le := binary.LittleEndian
	align := func(n uint32) int { return int((n + 3) &^ 3) }
	for len(notes) >= 12 {
		namesz, descsz, typ := le.Uint32(notes), le.Uint32(notes[4:]), le.Uint32(notes[8:])
		if namesz > elfMaxNote || descsz > elfMaxNote {
			return ""
		}
		body := notes[12:]
		if len(body) < align(namesz)+int(descsz) {
			return ""
		}
		if typ == elfNTBuildID && namesz == 4 && string(body[:4]) == "GNU\x00" && descsz > 0 {
			return hex.EncodeToString(body[4 : 4+descsz])
		}
		next := 12 + align(namesz) + align(descsz)
		if next > len(notes) {
			return ""
		}
		notes = notes[next:]
	}
	return ""
}
