package replay

import (
	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/recorder"
)

// The engine's questions about FIFOs are answered from the trace; the
// stand-in reader is opened for real too (the guest's opens of the FIFO
// run on the replay's files, and a writer's must not wait), and the
// guest's new descriptors lose O_NONBLOCK for real.

func (o *oracle) Fifo(tid, dirfd int, path string, nofollow bool) (detcore.FileID, bool) {
	ev, ok := o.p.answer(recorder.QueryFifo, recorder.FifoKey(dirfd, path, nofollow))
	if !ok || ev.Result != 1 || len(ev.Mem) != 1 {
		return detcore.FileID{}, false
	}
	id, err := recorder.DecodeFileID(ev.Mem[0].Data)
	if err != nil {
		o.p.diverge(0, "corrupt FIFO answer: %v", err)
		return detcore.FileID{}, false
	}
	return id, true
}

func (o *oracle) FifoHasReader(tid, dirfd int, path string, nofollow bool) bool {
	ev, ok := o.p.answer(recorder.QueryFifoRead, recorder.FifoKey(dirfd, path, nofollow))
	return !ok || ev.Result == 1
}

func (o *oracle) FifoReader(tid, dirfd int, path string, nofollow bool) (detcore.FifoReader, error) {
	key := recorder.FifoKey(dirfd, path, nofollow)
	ev, ok := o.p.answer(recorder.QueryFifoWrite, key)
	if !ok || ev.Result != recorder.FifoReaderOpen {
		return nil, detcore.ErrNotEmulated
	}
	r := &fifoReader{o: o, key: key}
	if ft, can := o.HostTracer.(detcore.FifoTracer); can {
		r.real, _ = ft.FifoReader(tid, dirfd, path, nofollow)
	}
	return r, nil
}

func (o *oracle) ClearNonblock(tid, fd int) error {
	if ft, can := o.HostTracer.(detcore.FifoTracer); can {
		return ft.ClearNonblock(tid, fd)
	}
	return detcore.ErrNotEmulated
}

// fifoReader is a stand-in reader whose answers come from the trace.
type fifoReader struct {
	o    *oracle
	key  uint64
	real detcore.FifoReader
}

func (r *fifoReader) WriterCame() bool {
	ev, ok := r.o.p.answer(recorder.QueryFifoWrite, r.key)
	return !ok || ev.Result == 1
}

func (r *fifoReader) Close() {
	if r.real != nil {
		r.real.Close()
	}
}
