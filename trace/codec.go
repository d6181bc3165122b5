package trace

import (
	"errors"
	"fmt"
)

// Event encoding.
//
// A block's uncompressed payload is a msgpack stream of events. Each event
// is two msgpack values: an unsigned head h, then a body.
//
//   - h >= 16: a system call at known call site h-16. A call site is a
//     tuple (tid, sysno, external, digest). The body is the result as an
//     integer or, when the call wrote memory, the array
//     [result, addr0, data0, addr1, data1, ...].
//   - h = 0: a system call with the tid, sysno and external flag of known
//     call site s but another digest; the body is
//     [s, digest, result, addr0, data0, ...].
//   - h = 1 to 15: an event of kind h whose body is an array of positional
//     fields, listed in encodeBody. For KindSyscall it is
//     [tid, sysno, digest, external, result, addr0, data0, ...]; for
//     KindTiming the time is the difference from the block's previous
//     KindTiming event.
//
// While the block has fewer than maxSites call sites, a KindSyscall body
// defines the next call site number, and an h = 0 event
// defines one the second time its call site occurs in the block (so
// arguments that change on every call do not crowd the table). All of this
// state restarts in every block, so each block decodes on its own.
//
// In a realistic stream most system calls repeat a call site already seen
// in their block. A payload-free one then costs one head byte (two or three
// beyond the first 112 call sites of the block) and a result of one to three bytes before
// compression; one whose arguments changed costs about twelve.
//
// Data is bin and an empty Siginfo nil; a blob reference is an ext8 value of type
// extBlob holding the 32-byte id. Readers ignore fields they do not know at
// the end of an array body (except syscall bodies, which end with the memory
// writes), and yield events of unknown kinds with only Kind set.

const (
	maxSites      = 4096
	headNewDigest = 0
	headSite0     = maxKind // head of call site 0; heads below are kinds
)

type site struct {
	tid      int32
	sysno    int32
	digest   uint64
	external bool
}

// prefix is a call site without its digest.
type prefix struct {
	tid      int32
	sysno    int32
	external bool
}

// encoder appends events to one block's payload.
type encoder struct {
	buf      []byte
	sites    map[site]uint32   // defined call sites
	prefixes map[prefix]uint32 // first defined call site of each prefix
	seen     map[site]bool     // call sites seen once in an h = 0 event
	lastTime int64             // of the previous KindTiming event
}

func (e *encoder) reset() {
	e.buf = e.buf[:0]
	if e.sites == nil {
		e.sites = make(map[site]uint32, 256)
		e.prefixes = make(map[prefix]uint32, 64)
		e.seen = make(map[site]bool, 256)
	}
	clear(e.sites)
	clear(e.prefixes)
	clear(e.seen)
	e.lastTime = 0
}

// checkEvent reports why ev cannot be encoded, or nil.
func checkEvent(ev *Event) error {
	if !ev.Kind.Known() {
		return fmt.Errorf("encode event: unknown kind %d", ev.Kind)
	}
	for i := range ev.Mem {
		if !ev.Mem[i].Blob.IsZero() && len(ev.Mem[i].Data) > 0 {
			return errors.New("encode event: memory write has both data and a blob")
		}
	}
	if n := ev.payloadSize(); n > MaxEventSize {
		return fmt.Errorf("encode event: %d bytes of payload exceed %d; store large outputs as blobs", n, MaxEventSize)
	}
	return nil
}

// append encodes ev at the end of the payload. The caller has checked it
// with checkEvent.
func (e *encoder) append(ev *Event) {
	b := e.buf
	if ev.Kind == KindSyscall {
		k := site{ev.Tid, ev.Sysno, ev.Digest, ev.External}
		if n, ok := e.sites[k]; ok {
			b = appendUint(b, uint64(n)+headSite0)
			if len(ev.Mem) == 0 {
				e.buf = appendInt(b, ev.Result)
				return
			}
			b = appendArrayHeader(b, 1+2*len(ev.Mem))
			b = appendInt(b, ev.Result)
			e.buf = appendMem(b, ev.Mem)
			return
		}
		p := prefix{ev.Tid, ev.Sysno, ev.External}
		if s, ok := e.prefixes[p]; ok {
			if e.seen[k] {
				e.define(k, p)
			} else {
				e.seen[k] = true
			}
			b = append(b, headNewDigest)
			b = appendArrayHeader(b, 3+2*len(ev.Mem))
			b = appendUint(b, uint64(s))
			b = appendUint(b, ev.Digest)
			b = appendInt(b, ev.Result)
			e.buf = appendMem(b, ev.Mem)
			return
		}
		e.define(k, p)
	}
	b = append(b, byte(ev.Kind))
	e.buf = e.encodeBody(b, ev)
}

// define gives call site k the next number, if the table has room.
func (e *encoder) define(k site, p prefix) {
	n := uint32(len(e.sites))
	if n >= maxSites {
		return
	}
	e.sites[k] = n
	if _, ok := e.prefixes[p]; !ok {
		e.prefixes[p] = n
	}
}

func appendMem(b []byte, mem []MemWrite) []byte {
	for i := range mem {
		b = appendUint(b, mem[i].Addr)
		if mem[i].Blob.IsZero() {
			b = appendBin(b, mem[i].Data)
		} else {
			b = appendBlobID(b, mem[i].Blob)
		}
	}
	return b
}

func appendMapped(b []byte, m *MappedFile) []byte {
	b = appendStr(b, m.Path)
	b = appendBlobID(b, m.Blob)
	b = appendUint(b, m.Addr)
	b = appendUint(b, m.Len)
	return appendUint(b, m.Offset)
}

// encodeBody appends the positional array body of ev.
func (e *encoder) encodeBody(b []byte, ev *Event) []byte {
	switch ev.Kind {
	case KindSyscall:
		b = appendArrayHeader(b, 5+2*len(ev.Mem))
		b = appendInt(b, int64(ev.Tid))
		b = appendInt(b, int64(ev.Sysno))
		b = appendUint(b, ev.Digest)
		b = appendBool(b, ev.External)
		b = appendInt(b, ev.Result)
		return appendMem(b, ev.Mem)
	case KindClone:
		b = appendArrayHeader(b, 3)
		b = appendInt(b, int64(ev.Tid))
		b = appendInt(b, int64(ev.Child))
		return appendUint(b, ev.Flags)
	case KindExit:
		b = appendArrayHeader(b, 3)
		b = appendInt(b, int64(ev.Tid))
		b = appendInt(b, int64(ev.Status))
		return appendBool(b, ev.Group)
	case KindExec:
		x := ev.Exec
		if x == nil {
			x = &Exec{}
		}
		b = appendArrayHeader(b, 4)
		b = appendInt(b, int64(ev.Tid))
		b = appendStr(b, x.Path)
		b = appendArrayHeader(b, len(x.Argv))
		for _, a := range x.Argv {
			b = appendStr(b, a)
		}
		b = appendArrayHeader(b, len(x.Files))
		for i := range x.Files {
			b = appendArrayHeader(b, 5)
			b = appendMapped(b, &x.Files[i])
		}
		return b
	case KindMmap:
		m := ev.Map
		if m == nil {
			m = &MappedFile{}
		}
		b = appendArrayHeader(b, 6)
		b = appendInt(b, int64(ev.Tid))
		return appendMapped(b, m)
	case KindSignal:
		if ev.AtCall {
			b = appendArrayHeader(b, 6)
		} else {
			b = appendArrayHeader(b, 5)
		}
		b = appendInt(b, int64(ev.Tid))
		b = appendInt(b, int64(ev.Signo))
		b = appendInt(b, int64(ev.Code))
		b = appendBool(b, ev.Deterministic)
		if len(ev.Siginfo) == 0 {
			b = append(b, mpNil)
		} else {
			b = appendBin(b, ev.Siginfo)
		}
		if ev.AtCall {
			b = appendBool(b, true)
		}
		return b
	case KindFile:
		f := ev.File
		if f == nil {
			f = &File{}
		}
		if f.Owned {
			b = appendArrayHeader(b, 8)
		} else {
			b = appendArrayHeader(b, 6)
		}
		b = appendInt(b, int64(ev.Tid))
		b = appendStr(b, f.Path)
		b = appendUint(b, uint64(f.Mode))
		b = appendBlobID(b, f.Blob)
		b = appendStr(b, f.Target)
		b = appendUint(b, f.Size)
		if f.Owned {
			b = appendUint(b, uint64(f.Uid))
			b = appendUint(b, uint64(f.Gid))
		}
		return b
	case KindTiming:
		b = appendArrayHeader(b, 2)
		b = appendInt(b, int64(ev.Tid))
		b = appendInt(b, ev.Time-e.lastTime)
		e.lastTime = ev.Time
		return b
	case KindPreempt:
		b = appendArrayHeader(b, 2)
		b = appendInt(b, int64(ev.Tid))
		return appendInt(b, ev.Ran)
	}
	panic("trace: encodeBody called with unchecked kind") // checkEvent guards every caller
}

// decoder reads the events of one block's payload.
type decoder struct {
	r        mpReader
	sites    []site
	seen     map[site]bool
	lastTime int64
}

func (d *decoder) reset(payload []byte) {
	d.r = mpReader{b: payload}
	d.sites = d.sites[:0]
	clear(d.seen)
	d.lastTime = 0
}

// done reports whether the payload is used up.
func (d *decoder) done() bool { return d.r.left() == 0 }

// next decodes one event into ev, reusing ev.Mem's storage. Byte slices in
// ev alias the payload. The error is one of the plain decoding errors.
func (d *decoder) next(ev *Event) error {
	mem := ev.Mem[:0]
	*ev = Event{}
	h, err := d.r.uint()
	if err != nil {
		return err
	}
	switch {
	case h >= headSite0:
		return d.knownSite(ev, mem, h-headSite0)
	case h == headNewDigest:
		return d.newDigest(ev, mem)
	}
	ev.Kind = Kind(h)
	n, err := d.r.arrayLen()
	if err != nil {
		return err
	}
	if !ev.Kind.Known() {
		return d.r.skipN(uint64(n), maxNesting)
	}
	if n < minFields[ev.Kind] {
		return fmt.Errorf("%s event has %d fields, want at least %d", ev.Kind, n, minFields[ev.Kind])
	}
	if ev.Tid, err = d.r.int32(); err != nil {
		return err
	}
	switch ev.Kind {
	case KindSyscall:
		if (n-5)%2 != 0 {
			return errUnpaired
		}
		err = d.syscall(ev)
		if err == nil {
			ev.Mem, err = d.mem(mem, (n-5)/2)
		}
		if len(d.sites) < maxSites {
			d.sites = append(d.sites, site{ev.Tid, ev.Sysno, ev.Digest, ev.External})
		}
		return err
	case KindClone:
		if ev.Child, err = d.r.int32(); err == nil {
			ev.Flags, err = d.r.uint()
		}
	case KindExit:
		if ev.Status, err = d.r.int32(); err == nil {
			ev.Group, err = d.r.bool()
		}
	case KindExec:
		ev.Exec, err = d.exec()
	case KindMmap:
		ev.Map = new(MappedFile)
		err = d.mapped(ev.Map)
	case KindSignal:
		if err = d.signal(ev); err == nil && n > minFields[KindSignal] {
			// Where a signal from outside comes (journal version 20).
			ev.AtCall, err = d.r.bool()
			n--
		}
	case KindFile:
		if ev.File, err = d.file(); err == nil && n > minFields[KindFile] {
			// Size, added after the first traces.
			ev.File.Size, err = d.r.uint()
			n--
		}
		if err == nil && n >= minFields[KindFile]+2 {
			// The owner, added later still.
			err = d.fileOwner(ev.File)
			n -= 2
		}
	case KindTiming:
		var dt int64
		if dt, err = d.r.int(); err == nil {
			ev.Time = d.lastTime + dt
			d.lastTime = ev.Time
		}
	case KindPreempt:
		ev.Ran, err = d.r.int()
	}
	if err != nil {
		return err
	}
	return d.r.skipN(uint64(n-minFields[ev.Kind]), maxNesting)
}

var errUnpaired = errors.New("syscall memory writes not in (address, data) pairs")

// knownSite decodes the body of an event at call site n.
func (d *decoder) knownSite(ev *Event, mem []MemWrite, n uint64) error {
	if n >= uint64(len(d.sites)) {
		return fmt.Errorf("call site %d not defined", n)
	}
	s := &d.sites[n]
	ev.Kind, ev.Tid, ev.Sysno, ev.Digest, ev.External = KindSyscall, s.tid, s.sysno, s.digest, s.external
	c, err := d.r.peek()
	if err != nil {
		return err
	}
	if c&0xf0 != 0x90 && c != mpArray16 && c != mpArray32 {
		ev.Result, err = d.r.int()
		return err
	}
	k, err := d.r.arrayLen()
	if err != nil {
		return err
	}
	if k%2 != 1 {
		return errUnpaired
	}
	if ev.Result, err = d.r.int(); err != nil {
		return err
	}
	ev.Mem, err = d.mem(mem, k/2)
	return err
}

// newDigest decodes the body of a head-0 event.
func (d *decoder) newDigest(ev *Event, mem []MemWrite) error {
	n, err := d.r.arrayLen()
	if err != nil {
		return err
	}
	if n < 3 || (n-3)%2 != 0 {
		return errUnpaired
	}
	s, err := d.r.uint()
	if err != nil {
		return err
	}
	if s >= uint64(len(d.sites)) {
		return fmt.Errorf("call site %d not defined", s)
	}
	ev.Kind, ev.Tid, ev.Sysno, ev.External = KindSyscall, d.sites[s].tid, d.sites[s].sysno, d.sites[s].external
	if ev.Digest, err = d.r.uint(); err != nil {
		return err
	}
	if ev.Result, err = d.r.int(); err != nil {
		return err
	}
	if ev.Mem, err = d.mem(mem, (n-3)/2); err != nil {
		return err
	}
	k := site{ev.Tid, ev.Sysno, ev.Digest, ev.External}
	switch {
	case !d.seen[k]:
		if d.seen == nil {
			d.seen = make(map[site]bool)
		}
		d.seen[k] = true
	case len(d.sites) < maxSites:
		d.sites = append(d.sites, k)
	}
	return nil
}

// minFields is the number of body fields of each known kind.
var minFields = [NumKinds]int{
	KindSyscall: 5,
	KindClone:   3,
	KindExit:    3,
	KindExec:    4,
	KindMmap:    6,
	KindSignal:  5,
	KindTiming:  2,
	KindFile:    5,
	KindPreempt: 2,
}

func (d *decoder) syscall(ev *Event) (err error) {
	if ev.Sysno, err = d.r.int32(); err != nil {
		return err
	}
	if ev.Digest, err = d.r.uint(); err != nil {
		return err
	}
	if ev.External, err = d.r.bool(); err != nil {
		return err
	}
	ev.Result, err = d.r.int()
	return err
}

// mem decodes n (address, data) pairs, appending to mem.
func (d *decoder) mem(mem []MemWrite, n int) ([]MemWrite, error) {
	for ; n > 0; n-- {
		var m MemWrite
		var err error
		if m.Addr, err = d.r.uint(); err != nil {
			return mem, err
		}
		c, err := d.r.peek()
		if err != nil {
			return mem, err
		}
		if c == mpExt8 {
			m.Blob, err = d.r.blobID()
		} else {
			m.Data, err = d.r.bytes()
		}
		if err != nil {
			return mem, err
		}
		mem = append(mem, m)
	}
	return mem, nil
}

func (d *decoder) mapped(m *MappedFile) (err error) {
	if m.Path, err = d.r.str(); err != nil {
		return err
	}
	if m.Blob, err = d.r.blobID(); err != nil {
		return err
	}
	if m.Addr, err = d.r.uint(); err != nil {
		return err
	}
	if m.Len, err = d.r.uint(); err != nil {
		return err
	}
	m.Offset, err = d.r.uint()
	return err
}

func (d *decoder) exec() (*Exec, error) {
	x := new(Exec)
	var err error
	if x.Path, err = d.r.str(); err != nil {
		return nil, err
	}
	n, err := d.r.arrayLen()
	if err != nil {
		return nil, err
	}
	for ; n > 0; n-- {
		a, err := d.r.str()
		if err != nil {
			return nil, err
		}
		x.Argv = append(x.Argv, a)
	}
	if n, err = d.r.arrayLen(); err != nil {
		return nil, err
	}
	for ; n > 0; n-- {
		k, err := d.r.arrayLen()
		if err != nil {
			return nil, err
		}
		if k < 5 {
			return nil, fmt.Errorf("mapped file has %d fields, want at least 5", k)
		}
		var m MappedFile
		if err := d.mapped(&m); err != nil {
			return nil, err
		}
		if err := d.r.skipN(uint64(k-5), maxNesting); err != nil {
			return nil, err
		}
		x.Files = append(x.Files, m)
	}
	return x, nil
}

func (d *decoder) signal(ev *Event) (err error) {
	if ev.Signo, err = d.r.int32(); err != nil {
		return err
	}
	if ev.Code, err = d.r.int32(); err != nil {
		return err
	}
	if ev.Deterministic, err = d.r.bool(); err != nil {
		return err
	}
	ev.Siginfo, err = d.r.bytes()
	return err
}

func (d *decoder) fileOwner(f *File) error {
	uid, err := d.r.uint()
	if err != nil {
		return err
	}
	gid, err := d.r.uint()
	if err != nil {
		return err
	}
	if uid > 0xffffffff || gid > 0xffffffff {
		return fmt.Errorf("file owner %d:%d out of range", uid, gid)
	}
	f.Uid, f.Gid, f.Owned = uint32(uid), uint32(gid), true
	return nil
}

func (d *decoder) file() (*File, error) {
	f := new(File)
	var err error
	if f.Path, err = d.r.str(); err != nil {
		return nil, err
	}
	mode, err := d.r.uint()
	if err != nil {
		return nil, err
	}
	if mode > 0xffffffff {
		return nil, fmt.Errorf("file mode %#x out of range", mode)
	}
	f.Mode = uint32(mode)
	if f.Blob, err = d.r.blobID(); err != nil {
		return nil, err
	}
	f.Target, err = d.r.str()
	return f, err
}
