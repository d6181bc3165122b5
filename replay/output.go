package replay

import (
	"io"
	"os"
	"sync"
	"time"
)

// The guest's output under a Session. Every run of a recording writes the
// same bytes, so going back and running forwards again would print what
// was printed already. Each run writes into pipes of its own instead, and
// the Session passes on only the bytes past the furthest any run has got
// to, on each stream: the user sees the recording's output once, in
// order, whatever the debugger does (the guest sees the descriptor kinds
// the recording had: the trace answers for them).

// SessionOptions configure a Session.
type SessionOptions struct {
	// Stdout and Stderr receive the guest's output, each byte once
	// across runs; nil: the Starter's own (every run's output goes where
	// the Starter sends it).
	Stdout, Stderr io.Writer
}

// outputMux passes on the runs' output past the high-water marks.
type outputMux struct {
	mu sync.Mutex
	w  [2]io.Writer
	hw [2]int64
	wg sync.WaitGroup
}

// outputDrain bounds the wait for killed runs' last output.
const outputDrain = 5 * time.Second

// pipes returns a run's output pipes: the write ends for the guest (close
// them once it has them) and starts copying from the read ends.
func (m *outputMux) pipes() (stdout, stderr *os.File, err error) {
	var ws [2]*os.File
	for i := range ws {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range ws[:i] {
				f.Close()
			}
			return nil, nil, err
		}
		ws[i] = w
		m.wg.Add(1)
		go m.copy(i, r)
	}
	return ws[0], ws[1], nil
}

// copy passes on stream i of one run until every writer is gone.
func (m *outputMux) copy(i int, r *os.File) {
	defer m.wg.Done()
	defer r.Close()
	buf := make([]byte, 32<<10)
	var off int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m.write(i, off, buf[:n])
			off += int64(n)
		}
		if err != nil {
			return
		}
	}
}

// write passes on what of b, at offset off of stream i, is new.
func (m *outputMux) write(i int, off int64, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	end := off + int64(len(b))
	if end <= m.hw[i] {
		return
	}
	skip := max(m.hw[i]-off, 0)
	_, _ = m.w[i].Write(b[skip:])
	m.hw[i] = end
}

// drain waits, for a while, until the runs' pipes are empty and closed.
func (m *outputMux) drain() {
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(outputDrain):
	}
}
