package ptrace

import "golang.org/x/sys/unix"

// TermInput is what a write to a pty master asks of the slave's line
// discipline: with ISIG, its INTR, QUIT and SUSP characters send SIGINT,
// SIGQUIT and SIGTSTP to the slave's foreground process group.
type TermInput struct {
	ISIG             bool
	Intr, Quit, Susp byte // 0: disabled (_POSIX_VDISABLE)
	// Group is the foreground process group as the guest numbers it (0:
	// none, or its leader is gone); HostGroup as the host does.
	Group, HostGroup int
}

// Signals returns the signals data, written to the master, sends the
// slave's foreground process group, each once, in the order they come.
func (in TermInput) Signals(data []byte) []int {
	if !in.ISIG {
		return nil
	}
	var sigs []int
	seen := map[int]bool{}
	for _, b := range data {
		sig := 0
		switch {
		case b == 0:
		case b == in.Intr:
			sig = int(unix.SIGINT)
		case b == in.Quit:
			sig = int(unix.SIGQUIT)
		case b == in.Susp:
			sig = int(unix.SIGTSTP)
		}
		if sig != 0 && !seen[sig] {
			seen[sig] = true
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// TerminalInput tells what a write to descriptor fd of thread tid, a pty
// master, does to its slave; false if fd is not a pty master.
func (t *Tracer) TerminalInput(tid, fd int) (TermInput, bool) {
	h, err := t.heldFd(tid, fd)
	if err != nil || h.stErr != nil || !isPtyMaster(&h.st) {
		return TermInput{}, false
	}
	// On a master, these ask about its slave.
	tio, err := unix.IoctlGetTermios(h.fd, unix.TCGETS)
	if err != nil {
		return TermInput{}, false
	}
	in := TermInput{
		ISIG: tio.Lflag&unix.ISIG != 0,
		Intr: tio.Cc[unix.VINTR], Quit: tio.Cc[unix.VQUIT], Susp: tio.Cc[unix.VSUSP],
	}
	if pg, err := unix.IoctlGetInt(h.fd, unix.TIOCGPGRP); err == nil && pg > 0 {
		in.HostGroup = pg
		if g, err := t.GuestTid(pg); err == nil {
			in.Group = g
		}
	}
	return in, true
}

// isPtyMaster reports whether st is a pty master (/dev/ptmx, 5:2).
func isPtyMaster(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && unix.Major(st.Rdev) == 5 && unix.Minor(st.Rdev) == 2
}
