package replay

import "github.com/hermitdbg/hermit/detcore"

// The debug layer offers every optional tracer interface the engine asks
// about descriptors, forwarding each to the tracer it wraps, with the
// engine's own answer where that tracer lacks it.

// WaitsOutside forwards detcore.OutsideTracer. Answering false when the
// inner tracer cannot tell is what the engine does without the interface,
// so every layer type can offer it.
func (l *layer) WaitsOutside(ws []detcore.FdWait) bool {
	ot, ok := l.inner.(detcore.OutsideTracer)
	return ok && ot.WaitsOutside(ws)
}

// InternalPipe forwards detcore.FastPipeTracer (false without it: no
// fast calls on pipes, as in a run whose tracer cannot tell).
func (l *layer) InternalPipe(tid, fd int) bool {
	pt, ok := l.inner.(detcore.FastPipeTracer)
	return ok && pt.InternalPipe(tid, fd)
}

// FdAccessMode forwards detcore.AccessModeTracer (-1 without it).
func (l *layer) FdAccessMode(tid, fd int) int {
	am, ok := l.inner.(detcore.AccessModeTracer)
	if !ok {
		return -1
	}
	return am.FdAccessMode(tid, fd)
}

// WriteEnd forwards detcore.PartWriteTracer (WriteUnknown without it).
func (l *layer) WriteEnd(tid, fd int) detcore.WriteEnd {
	if pw, ok := l.inner.(detcore.PartWriteTracer); ok {
		return pw.WriteEnd(tid, fd)
	}
	return detcore.WriteUnknown
}

// SetNonblock forwards detcore.PartWriteTracer.
func (l *layer) SetNonblock(tid, fd int, on bool) error {
	pw, ok := l.inner.(detcore.PartWriteTracer)
	if !ok {
		return detcore.ErrNotEmulated
	}
	return pw.SetNonblock(tid, fd, on)
}

// InBackground forwards detcore.TtyTracer (false without it, as the
// engine assumes without the interface).
func (l *layer) InBackground(tid int) bool {
	tt, ok := l.inner.(detcore.TtyTracer)
	return ok && tt.InBackground(tid)
}

// The FIFO questions forward detcore.FifoTracer: without it (Fifo says
// no) the engine lets opens run as they are, as it does without the
// interface, so every layer type can offer it.
func (l *layer) Fifo(tid, dirfd int, path string, nofollow bool) (detcore.FileID, bool) {
	if ft, ok := l.inner.(detcore.FifoTracer); ok {
		return ft.Fifo(tid, dirfd, path, nofollow)
	}
	return detcore.FileID{}, false
}

func (l *layer) FifoHasReader(tid, dirfd int, path string, nofollow bool) bool {
	return l.inner.(detcore.FifoTracer).FifoHasReader(tid, dirfd, path, nofollow)
}

func (l *layer) FifoReader(tid, dirfd int, path string, nofollow bool) (detcore.FifoReader, error) {
	return l.inner.(detcore.FifoTracer).FifoReader(tid, dirfd, path, nofollow)
}

func (l *layer) ClearNonblock(tid, fd int) error {
	return l.inner.(detcore.FifoTracer).ClearNonblock(tid, fd)
}
