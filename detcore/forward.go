package detcore

// Actions forwards to Inner the optional tracer interfaces that act on
// the guest and answer nothing a replay must be told (PtyTracer,
// MaskTracer), for the tracers that wrap another (record's, replay's):
// each does nothing, or fails with ErrNotEmulated, where Inner has not
// the interface.
type Actions struct{ Inner any }

// PtyFlush forwards PtyTracer.
func (a Actions) PtyFlush(tid, fd int, procs []int) {
	if pt, ok := a.Inner.(PtyTracer); ok {
		pt.PtyFlush(tid, fd, procs)
	}
}

// SignalMask forwards MaskTracer.
func (a Actions) SignalMask(tid int) (uint64, error) {
	if mt, ok := a.Inner.(MaskTracer); ok {
		return mt.SignalMask(tid)
	}
	return 0, ErrNotEmulated
}

// SetSignalMask forwards MaskTracer.
func (a Actions) SetSignalMask(tid int, mask uint64) error {
	if mt, ok := a.Inner.(MaskTracer); ok {
		return mt.SetSignalMask(tid, mask)
	}
	return ErrNotEmulated
}
