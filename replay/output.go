package replay

import (
	"io"
	"os"
	"sync"
	"syscall"
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

// outStream is one stream of one run: the read end of its pipe (non-
// blocking) and how far the run has written.
type outStream struct {
	i   int
	fd  int
	off int64
	eof bool
}

// outputDrain bounds the wait for killed runs' last output.
const outputDrain = 5 * time.Second

// Polling intervals of a stream with nothing to read: it backs off from
// the first to the second while it stays idle.
const (
	outputPollMin = time.Millisecond
	outputPollMax = 50 * time.Millisecond
)

// pipes returns a run's output pipes: the write ends for the guest (close
// them once it has them), and the read ends, which a goroutine polls and
// sync drains (at every stop, so that what the guest wrote before it
// comes before what the debugger prints of it).
func (m *outputMux) pipes() (stdout, stderr *os.File, streams []*outStream, err error) {
	var ws [2]*os.File
	for i := range ws {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			for _, f := range ws[:i] {
				f.Close()
			}
			for _, st := range streams {
				syscall.Close(st.fd)
			}
			return nil, nil, nil, err
		}
		if err := syscall.SetNonblock(fds[0], true); err != nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
			return nil, nil, nil, err
		}
		ws[i] = os.NewFile(uintptr(fds[1]), "guest output")
		st := &outStream{i: i, fd: fds[0]}
		streams = append(streams, st)
		m.wg.Add(1)
		go m.poll(st)
	}
	return ws[0], ws[1], streams, nil
}

// poll passes on a stream as it comes, until every writer is gone.
func (m *outputMux) poll(st *outStream) {
	defer m.wg.Done()
	wait := outputPollMin
	for {
		m.mu.Lock()
		n := m.read(st)
		eof := st.eof
		m.mu.Unlock()
		switch {
		case eof:
			syscall.Close(st.fd)
			return
		case n > 0:
			wait = outputPollMin
		default:
			wait = min(2*wait, outputPollMax)
		}
		time.Sleep(wait)
	}
}

// sync passes on everything the run's streams hold now.
func (m *outputMux) sync(streams []*outStream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range streams {
		m.read(st)
	}
}

// read passes on what st holds, and returns how many bytes it read.
// Preconditions: mu held.
func (m *outputMux) read(st *outStream) int {
	if st.eof {
		return 0
	}
	var buf [32 << 10]byte
	total := 0
	for {
		n, err := syscall.Read(st.fd, buf[:])
		if n > 0 {
			m.write(st.i, st.off, buf[:n])
			st.off += int64(n)
			total += n
			continue
		}
		if err == syscall.EINTR {
			continue
		}
		if n == 0 && err == nil {
			st.eof = true
		}
		return total
	}
}

// write passes on what of b, at offset off of stream i, is new.
// Preconditions: mu held.
func (m *outputMux) write(i int, off int64, b []byte) {
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
