package recorder

import (
	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/trace"
)

// The engine's questions about FIFOs (detcore/fifo.go) are answers of the
// host like a stat: logged, so that replay makes the same decisions.

// Results of QueryFifoWrite for the opening of a stand-in reader.
const (
	FifoNoReader   = -1
	FifoReaderOpen = 2
)

// FifoKey is the key of a FIFO question about path.
func FifoKey(dirfd int, path string, nofollow bool) uint64 {
	n := uint64(uint32(dirfd)) << 1
	if nofollow {
		n |= 1
	}
	return StringKey(path, n)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (t *tracer) Fifo(tid, dirfd int, path string, nofollow bool) (detcore.FileID, bool) {
	var id detcore.FileID
	ok := false
	if ft, can := t.HostTracer.(detcore.FifoTracer); can {
		id, ok = ft.Fifo(tid, dirfd, path, nofollow)
	}
	var mem []trace.MemWrite
	if ok {
		mem = []trace.MemWrite{{Data: EncodeFileID(id)}}
	}
	t.answer(QueryFifo, FifoKey(dirfd, path, nofollow), b2i(ok), mem)
	return id, ok
}

func (t *tracer) FifoHasReader(tid, dirfd int, path string, nofollow bool) bool {
	ok := true
	if ft, can := t.HostTracer.(detcore.FifoTracer); can {
		ok = ft.FifoHasReader(tid, dirfd, path, nofollow)
	}
	t.answer(QueryFifoRead, FifoKey(dirfd, path, nofollow), b2i(ok), nil)
	return ok
}

func (t *tracer) FifoReader(tid, dirfd int, path string, nofollow bool) (detcore.FifoReader, error) {
	key := FifoKey(dirfd, path, nofollow)
	ft, can := t.HostTracer.(detcore.FifoTracer)
	if !can {
		t.answer(QueryFifoWrite, key, FifoNoReader, nil)
		return nil, detcore.ErrNotEmulated
	}
	r, err := ft.FifoReader(tid, dirfd, path, nofollow)
	if err != nil {
		t.answer(QueryFifoWrite, key, FifoNoReader, nil)
		return nil, err
	}
	t.answer(QueryFifoWrite, key, FifoReaderOpen, nil)
	return &fifoReader{FifoReader: r, t: t, key: key}, nil
}

func (t *tracer) ClearNonblock(tid, fd int) error {
	if ft, can := t.HostTracer.(detcore.FifoTracer); can {
		return ft.ClearNonblock(tid, fd)
	}
	return detcore.ErrNotEmulated
}

// fifoReader logs the answers of a stand-in reader.
type fifoReader struct {
	detcore.FifoReader
	t   *tracer
	key uint64
}

func (r *fifoReader) WriterCame() bool {
	came := r.FifoReader.WriterCame()
	r.t.answer(QueryFifoWrite, r.key, b2i(came), nil)
	return came
}
