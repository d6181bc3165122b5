package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"strconv"
	"syscall"

	"github.com/hermitdbg/hermit/trace"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/replay"
)

func (c *traceCmd) dump(args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	from := fs.Uint64("from", 0, "first event to print")
	to := fs.Uint64("to", math.MaxUint64, "last event to print (inclusive)")
	tid := fs.Int64("tid", -1, "print only the events of this thread")
	asJSON := fs.Bool("json", false, "print one JSON object per line instead")
	r, code := c.parseOpen(fs, dumpUsage, args)
	if r == nil {
		return code
	}
	defer r.Close()
	if *from > r.Count() {
		if err := r.Truncation(); err != nil {
			return c.fail("%s: --from %d: %v", r.Dir(), *from, err)
		}
		return c.fail("%s: --from %d: the trace has %d events", r.Dir(), *from, r.Count())
	}
	if err := r.Seek(*from); err != nil {
		return c.fail("%s: %v", r.Dir(), err)
	}
	out := bufio.NewWriter(c.stdout)
	defer out.Flush()
	var line []byte
	for n, ev := range r.Events() {
		if n > *to {
			return 0
		}
		if *tid >= 0 && int64(ev.Tid) != *tid {
			continue
		}
		if *asJSON {
			line = appendJSONEvent(line[:0], n, ev)
		} else {
			line = appendEventLine(line[:0], n, ev)
		}
		line = append(line, '\n')
		if _, err := out.Write(line); err != nil {
			return c.fail("%v", err)
		}
	}
	if err := r.Err(); err != nil {
		out.Flush()
		return c.fail("%s: %v", r.Dir(), err)
	}
	return 0
}

// appendEventLine formats ev in the strace-like form that --help describes.
func appendEventLine(b []byte, n uint64, ev *trace.Event) []byte {
	b = fmt.Appendf(b, "#%d %d ", n, ev.Tid)
	switch ev.Kind {
	case trace.KindSyscall:
		mem := ev.Mem
		switch {
		case ev.Sysno < 0:
			// The host's answer to one of the engine's questions.
			b = fmt.Appendf(b, "%s(%#x) = %d", syscallName(ev.Sysno), ev.Digest, ev.Result)
		case !ev.External:
			// A syscall's entry, with its arguments when they changed.
			if args, ok := recordedArgs(ev); ok {
				b = append(b, "-> "...)
				b = append(b, replay.FormatCall(int(ev.Sysno), args)...)
				return b
			}
			b = fmt.Appendf(b, "-> %s(args=%016x)", syscallName(ev.Sysno), ev.Digest)
			return b
		default:
			b = fmt.Appendf(b, "<- %s = %d", syscallName(ev.Sysno), ev.Result)
			if ev.Result < 0 && ev.Result >= -4095 {
				b = fmt.Appendf(b, " (%v)", syscall.Errno(-ev.Result))
			}
			switch ev.Digest {
			case recorder.ResultForce:
				b = append(b, " [forced]"...)
			case recorder.ResultPlace:
				b = append(b, " [placed]"...)
			case recorder.ResultSocket:
				b = append(b, " [accepted: replay stands in a socket]"...)
			case recorder.ResultStandIn:
				b = append(b, " [terminal: replay stands in a pty of its own]"...)
			case recorder.ResultRefused:
				b = append(b, " [refused: replay stops here]"...)
			case recorder.ResultSplice:
				b = append(b, " [spliced: replay redoes the guest's end]"...)
			case recorder.ResultPreempted:
				b = append(b, " [interrupted by the watchdog's stop: made again]"...)
			}
		}
		for _, m := range mem {
			b = fmt.Appendf(b, " %#x<-", m.Addr)
			if !m.Blob.IsZero() {
				b = append(b, "blob:"...)
				b = append(b, m.Blob.Short()...)
				continue
			}
			b = appendQuoted(b, m.Data, 32)
		}
	case trace.KindClone:
		b = fmt.Appendf(b, "clone(flags=%#x) = %d", ev.Flags, ev.Child)
	case trace.KindExit:
		who := "thread "
		if ev.Group {
			who = ""
		}
		ws := syscall.WaitStatus(ev.Status)
		switch {
		case ws.Signaled():
			b = fmt.Appendf(b, "+++ %skilled by %s +++", who, signalName(int32(ws.Signal())))
		default:
			b = fmt.Appendf(b, "+++ %sexited with %d +++", who, ws.ExitStatus())
		}
	case trace.KindExec:
		x := ev.Exec
		if x == nil {
			x = &trace.Exec{}
		}
		b = append(b, "execve("...)
		b = strconv.AppendQuote(b, x.Path)
		b = append(b, ", ["...)
		for i, a := range x.Argv {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendQuote(b, a)
		}
		b = append(b, "])"...)
		for i, f := range x.Files {
			if i == 0 {
				b = append(b, " maps"...)
			}
			b = fmt.Appendf(b, " %s@%#x=blob:%s", f.Path, f.Addr, f.Blob.Short())
		}
	case trace.KindMmap:
		m := ev.Map
		if m == nil {
			m = &trace.MappedFile{}
		}
		b = fmt.Appendf(b, "mmap(%s, len=%#x, off=%#x) = %#x blob:%s", m.Path, m.Len, m.Offset, m.Addr, m.Blob.Short())
	case trace.KindSignal:
		how := "async"
		switch {
		case ev.Deterministic:
			how = "deterministic"
		case ev.AtCall:
			how = "async, before the call"
		}
		b = fmt.Appendf(b, "--- %s {si_code=%d} %s", signalName(ev.Signo), ev.Code, how)
		if len(ev.Siginfo) > 0 {
			b = fmt.Appendf(b, " siginfo=%d bytes", len(ev.Siginfo))
		}
		b = append(b, " ---"...)
	case trace.KindFile:
		f := ev.File
		if f == nil {
			f = &trace.File{}
		}
		b = fmt.Appendf(b, "file %s mode=%#o", f.Path, f.Mode)
		if !f.Blob.IsZero() {
			b = fmt.Appendf(b, " blob:%s", f.Blob.Short())
		}
		if f.Target != "" {
			b = fmt.Appendf(b, " -> %s", f.Target)
		}
	case trace.KindTiming:
		b = fmt.Appendf(b, "timing %d.%09ds", ev.Time/1e9, abs(ev.Time%1e9))
	case trace.KindPreempt:
		b = fmt.Appendf(b, "preempted by the watchdog after %d.%09ds of CPU", ev.Ran/1e9, abs(ev.Ran%1e9))
	default:
		b = fmt.Appendf(b, "%s (unknown to this hermit)", ev.Kind)
	}
	return b
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// appendQuoted appends data as a quoted string of at most max bytes,
// followed by "..." and the length if longer.
func appendQuoted(b, data []byte, max int) []byte {
	if len(data) <= max {
		return strconv.AppendQuote(b, string(data))
	}
	b = strconv.AppendQuote(b, string(data[:max]))
	return fmt.Appendf(b, "...(%d bytes)", len(data))
}

var signalNames = [...]string{1: "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT",
	"SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ",
	"SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"}

func signalName(sig int32) string {
	switch {
	case sig > 0 && int(sig) < len(signalNames):
		return signalNames[sig]
	case sig >= 34 && sig <= 64:
		return "SIGRTMIN+" + strconv.Itoa(int(sig-34))
	}
	return "signal " + strconv.Itoa(int(sig))
}

// jsonEvent is the --json form of an event. Pointer fields are present for
// their kinds even when zero.
type jsonEvent struct {
	N             uint64            `json:"n"`
	Kind          string            `json:"kind"`
	Tid           int32             `json:"tid"`
	Syscall       string            `json:"syscall,omitempty"`
	Sysno         *int32            `json:"sysno,omitempty"`
	Digest        string            `json:"digest,omitempty"`
	Result        *int64            `json:"result,omitempty"`
	External      bool              `json:"external,omitempty"`
	Mem           []jsonMem         `json:"mem,omitempty"`
	Child         *int32            `json:"child,omitempty"`
	Flags         *uint64           `json:"flags,omitempty"`
	Status        *int32            `json:"status,omitempty"`
	Group         bool              `json:"group,omitempty"`
	Exec          *trace.Exec       `json:"exec,omitempty"`
	Map           *trace.MappedFile `json:"map,omitempty"`
	File          *trace.File       `json:"file,omitempty"`
	Signal        string            `json:"signal,omitempty"`
	Signo         *int32            `json:"signo,omitempty"`
	Code          *int32            `json:"code,omitempty"`
	Deterministic bool              `json:"deterministic,omitempty"`
	AtCall        bool              `json:"at_call,omitempty"`
	Siginfo       []byte            `json:"siginfo,omitempty"` // base64
	Time          *int64            `json:"time_ns,omitempty"`
	Ran           *int64            `json:"ran_ns,omitempty"`
}

type jsonMem struct {
	Addr uint64        `json:"addr"`
	Data []byte        `json:"data,omitempty"` // base64
	Len  int           `json:"len"`
	Blob *trace.BlobID `json:"blob,omitempty"`
}

func appendJSONEvent(b []byte, n uint64, ev *trace.Event) []byte {
	j := jsonEvent{N: n, Kind: ev.Kind.String(), Tid: ev.Tid}
	switch ev.Kind {
	case trace.KindSyscall:
		j.Syscall, j.Sysno, j.Digest = syscallName(ev.Sysno), &ev.Sysno, fmt.Sprintf("%016x", ev.Digest)
		j.Result, j.External = &ev.Result, ev.External
		for _, m := range ev.Mem {
			jm := jsonMem{Addr: m.Addr, Data: m.Data, Len: len(m.Data)}
			if !m.Blob.IsZero() {
				id := m.Blob
				jm.Blob = &id
			}
			j.Mem = append(j.Mem, jm)
		}
	case trace.KindClone:
		j.Child, j.Flags = &ev.Child, &ev.Flags
	case trace.KindExit:
		j.Status, j.Group = &ev.Status, ev.Group
	case trace.KindExec:
		j.Exec = ev.Exec
	case trace.KindMmap:
		j.Map = ev.Map
	case trace.KindSignal:
		j.Signal, j.Signo, j.Code = signalName(ev.Signo), &ev.Signo, &ev.Code
		j.Deterministic, j.AtCall, j.Siginfo = ev.Deterministic, ev.AtCall, ev.Siginfo
	case trace.KindTiming:
		j.Time = &ev.Time
	case trace.KindPreempt:
		j.Ran = &ev.Ran
	case trace.KindFile:
		j.File = ev.File
	}
	out, err := json.Marshal(&j)
	if err != nil { // cannot happen for these types; keep the line valid JSON
		return fmt.Appendf(b, `{"n":%d,"error":%q}`, n, err.Error())
	}
	return append(b, out...)
}

// recordedArgs returns the arguments a syscall entry event carries.
func recordedArgs(ev *trace.Event) ([6]uint64, bool) {
	if len(ev.Mem) != 1 || ev.Mem[0].Addr != 0 {
		return [6]uint64{}, false
	}
	return recorder.DecodeArgs(ev.Mem[0].Data)
}

// syscallName names a syscall number from a trace.
func syscallName(nr int32) string {
	if nr < 0 {
		return "host:" + recorder.QueryName(nr)
	}
	return abi.SyscallName(int(nr))
}
