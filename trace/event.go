package trace

import "fmt"

// Kind says what an Event records.
type Kind uint8

// Event kinds. The numbers are part of the format; never reuse one.
const (
	// KindSyscall is a system call result. External calls depend on host
	// state: replay injects Result and Mem instead of running them. Other
	// calls are re-executed on replay and Result only checks for divergence.
	KindSyscall Kind = 1
	// KindClone is the creation of a thread or process.
	KindClone Kind = 2
	// KindExit is the exit of a thread or, with Group set, of a process.
	KindExit Kind = 3
	// KindExec is a successful execve with the files it mapped.
	KindExec Kind = 4
	// KindMmap is a file mapped after exec, such as a shared library.
	KindMmap Kind = 5
	// KindSignal is the delivery of a signal.
	KindSignal Kind = 6
	// KindTiming is the logical time at which a blocking external operation
	// of thread Tid completed.
	KindTiming Kind = 7
	// KindFile is a file, directory or symbolic link of the recording
	// host's filesystem that the guest used, captured once so that replay
	// can rebuild it without the host (File).
	KindFile Kind = 8
	// KindPreempt is the watchdog's preemption of thread Tid, a thread
	// that ran Ran nanoseconds of CPU time since its last stop without a
	// syscall while others waited, at a point no run repeats: replay
	// preempts it after as much CPU time (journal version 11).
	KindPreempt Kind = 9

	// NumKinds bounds the kinds this version knows: every known Kind is
	// below it. Readers yield events of unknown kinds below maxKind with
	// only Kind set, so later minor additions stay readable.
	NumKinds = 10
	maxKind  = 16
)

var kindNames = [NumKinds]string{"", "syscall", "clone", "exit", "exec", "mmap", "signal", "timing", "file", "preempt"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// Known reports whether this version of the package knows kind k.
func (k Kind) Known() bool { return k > 0 && k < NumKinds }

// Event is one recorded fact. Kind selects which fields are meaningful; the
// others are zero. Tid is the acting thread for every kind.
//
// Events returned by a Reader alias its buffers (Mem data, Siginfo): they
// are valid until the next call to Next or Seek. Copy what you keep.
type Event struct {
	Kind Kind
	Tid  int32

	// KindSyscall.
	Sysno    int32      // system call number (x86-64)
	External bool       // Result and Mem come from the host; replay injects them
	Digest   uint64     // digest of the arguments, checked on replay
	Result   int64      // raw return value, -errno on failure
	Mem      []MemWrite // bytes the kernel wrote into the guest, in order

	// KindClone: Tid is the parent.
	Child int32  // the new thread's tid (the pid for a new process)
	Flags uint64 // clone flags

	// KindExit.
	Status int32 // wait status
	Group  bool  // the whole thread group exited

	// KindExec.
	Exec *Exec
	// KindMmap.
	Map *MappedFile

	// KindSignal.
	Signo         int32
	Code          int32  // si_code
	Deterministic bool   // raised by the thread's own instruction (fault, trap)
	Siginfo       []byte // raw siginfo_t, when replay must reproduce it
	// AtCall: a signal from outside that came as the thread ran, given
	// at the entry of the thread's next call, before the call, which it
	// makes again after the handler (journal version 20).
	AtCall bool

	// KindTiming.
	Time int64 // logical nanoseconds

	// KindFile.
	File *File

	// KindPreempt.
	Ran int64 // CPU nanoseconds since the thread's last stop
}

// File is one filesystem object the guest used, as it was when the guest
// first opened it (or executed it, or entered it).
type File struct {
	Path string `json:"path"` // absolute path in the guest's view
	// Mode is the st_mode: file type and permission bits.
	Mode uint32 `json:"mode"`
	// Blob holds a regular file's contents.
	Blob BlobID `json:"blob,omitempty"`
	// Target is a symbolic link's target.
	Target string `json:"target,omitempty"`
	// Size, for a regular file without a Blob, is the size of a file too
	// large to store: replay gives it that size (a sparse file) and reads
	// of it are recorded instead.
	Size uint64 `json:"size,omitempty"`
	// Uid and Gid are the owner, when Owned (traces of hermits before
	// owners were kept have none): replay gives the file that owner
	// where it can.
	Uid   uint32 `json:"uid,omitempty"`
	Gid   uint32 `json:"gid,omitempty"`
	Owned bool   `json:"owned,omitempty"`
}

// File types in Mode (<sys/stat.h>).
const (
	ModeType    = 0o170000
	ModeDir     = 0o040000
	ModeRegular = 0o100000
	ModeSymlink = 0o120000
)

// MemWrite is one output buffer of a system call. Small outputs are stored
// in the event stream as Data; large ones (file contents) may be stored once
// as a blob and referenced by Blob, in which case Data is empty.
type MemWrite struct {
	Addr uint64
	Data []byte
	Blob BlobID
}

// Exec describes a successful execve.
type Exec struct {
	Path  string       `json:"path"`  // the executable as the guest named it
	Argv  []string     `json:"argv"`  // the new program's arguments
	Files []MappedFile `json:"files"` // executable, interpreter and anything else mapped by exec
}

// MappedFile is a file mapped into the guest and stored as a blob.
type MappedFile struct {
	Path   string `json:"path"`
	Blob   BlobID `json:"blob"`
	Addr   uint64 `json:"addr"`   // start of the mapping, 0 if not known
	Len    uint64 `json:"len"`    // length of the mapping
	Offset uint64 `json:"offset"` // offset into the file
}

// MaxEventSize bounds the encoded size of one event. Store larger outputs
// as blobs.
const MaxEventSize = 16 << 20

// payloadSize is the size of an event's variable-length parts, an upper
// bound on what its encoding adds to the fixed fields.
func (ev *Event) payloadSize() int {
	n := len(ev.Siginfo)
	for i := range ev.Mem {
		n += len(ev.Mem[i].Data) + 16
	}
	if ev.Exec != nil {
		n += len(ev.Exec.Path)
		for _, a := range ev.Exec.Argv {
			n += len(a) + 5
		}
		for i := range ev.Exec.Files {
			n += len(ev.Exec.Files[i].Path) + 80
		}
	}
	if ev.Map != nil {
		n += len(ev.Map.Path)
	}
	if ev.File != nil {
		n += len(ev.File.Path) + len(ev.File.Target) + 64
	}
	return n
}
