package gdbstub

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// qXfer:<object>:read:<annex>:<offset>,<length> reads a document in
// pieces: 'm' and data when more follows, 'l' and data for the last.

// xferObjects are the readable objects; each makes the whole document.
var xferObjects = map[string]func(s *session, annex string) ([]byte, error){
	"features":       (*session).xferFeatures,
	"auxv":           (*session).xferAuxv,
	"exec-file":      (*session).xferExecFile,
	"threads":        (*session).xferThreads,
	"libraries-svr4": (*session).xferLibraries,
	"siginfo":        (*session).xferSiginfo,
}

func (s *session) qXfer(r *request) []byte {
	f := strings.SplitN(strings.TrimPrefix(r.args, ":"), ":", 4)
	if len(f) != 4 || f[1] != "read" {
		return nil // writes and unknown operations: unsupported
	}
	object, ok := xferObjects[f[0]]
	if !ok {
		return nil
	}
	off, n, err := parseAddrLen(f[3])
	if err != nil {
		return errReply
	}
	data, err := object(s, f[2])
	if err != nil {
		s.logf("gdbstub: qXfer:%s:read:%s: %v", f[0], f[2], err)
		if errors.Is(err, errNoAnnex) {
			return []byte("E00")
		}
		return errReply
	}
	return xferChunk(data, off, n)
}

// xferChunk answers the piece of data at off of at most n bytes.
func xferChunk(data []byte, off, n uint64) []byte {
	if off >= uint64(len(data)) {
		return []byte("l")
	}
	n = min(n, maxReply, uint64(len(data))-off)
	piece := data[off : off+n]
	c := byte('m')
	if off+n == uint64(len(data)) {
		c = 'l'
	}
	return escapeBinary([]byte{c}, piece)
}

var errNoAnnex = errors.New("no such annex")

func (s *session) xferFeatures(annex string) ([]byte, error) {
	if annex == "target.xml" {
		// The CPU has AVX when a thread's registers have it; from
		// here on, 'g' replies carry what this description says.
		s.avx = false
		if tid := s.resolve(s.gThread); tid > 0 {
			if regs, err := s.t.Registers(tid); err == nil && regs != nil {
				s.avx = regs.HaveAVX
			}
		}
		if s.avx {
			return []byte(targetAVXXML), nil
		}
		return []byte(targetXML), nil
	}
	doc, ok := featureAnnexes[annex]
	if !ok {
		return nil, errNoAnnex
	}
	return []byte(doc), nil
}

func (s *session) xferAuxv(string) ([]byte, error) { return s.t.Auxv() }

func (s *session) xferExecFile(string) ([]byte, error) {
	exe, err := s.t.ExecFile()
	return []byte(exe), err
}

// xferThreads lists the threads with their names.
func (s *session) xferThreads(string) ([]byte, error) {
	ths, err := s.t.Threads()
	if err != nil {
		return nil, err
	}
	if s.dead != nil {
		ths = nil
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<threads>\n")
	for _, th := range ths {
		fmt.Fprintf(&b, `<thread id="%s" core="0"`, s.threadID(th.ID))
		if th.Name != "" {
			fmt.Fprintf(&b, ` name="%s"`, xmlEscape(th.Name))
		}
		b.WriteString("/>\n")
	}
	b.WriteString("</threads>\n")
	return []byte(b.String()), nil
}

// xferLibraries walks the dynamic linker's list; an empty list when there
// is none (yet).
func (s *session) xferLibraries(string) ([]byte, error) {
	auxv, err := s.t.Auxv()
	if err != nil {
		return nil, err
	}
	mainLM, libs, err := svr4Libraries(auxv, s.t.ReadMemory)
	if err != nil {
		// Memory that does not say: as good as no list yet.
		s.logf("gdbstub: libraries: %v", err)
		mainLM, libs = 0, nil
	}
	return []byte(svr4XML(mainLM, libs)), nil
}

// shlibInfoAddr answers lldb's qShlibInfoAddr with where the program's
// DT_DEBUG keeps the address of r_debug, as lldb-server's Linux side
// means it: without it lldb 14 takes the svr4 list's main-lm for that
// place and plants its library-load breakpoint at a wild address.
func (s *session) shlibInfoAddr(*request) []byte {
	auxv, err := s.t.Auxv()
	if err != nil {
		return errReply
	}
	slot, err := dtDebugSlot(auxv, s.t.ReadMemory)
	if err != nil || slot == 0 {
		return errReply // a static program: lldb then needs no rendezvous
	}
	return strconv.AppendUint(nil, slot, 16)
}

// xferSiginfo is the siginfo of the Hg thread's signal.
func (s *session) xferSiginfo(string) ([]byte, error) {
	tid := s.resolve(s.gThread)
	if tid == 0 {
		return nil, errors.New("no thread")
	}
	return s.t.Siginfo(tid)
}
