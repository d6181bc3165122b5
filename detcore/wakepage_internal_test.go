package detcore

import (
	"syscall"
	"testing"
)

// TestDropClockWhileWatched: the watchdog looks at the running thread's
// clock page (wokeFromPage), on its own goroutine, until the engine's
// next turn; the engine unmaps a page once no process has it (an exit,
// an exec). The watchdog must never read a page after its unmapping:
// the page stayed the one it looked at until the next turn, and hermit
// died of a fault there, in a Go build whose compile processes came and
// went. Here the watchdog also looks from a goroutine of its own while
// pages go.
func TestDropClockWhileWatched(t *testing.T) {
	e := &Engine{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				e.wokeFromPage()
			}
		}
	}()
	for i := 0; i < 300; i++ {
		mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		c := NewClockPage(mem, func() { _ = syscall.Munmap(mem) })
		c.refs = 1
		e.wakePage.Store(c)
		e.dropClock(&process{clock: c})
		if e.wokeFromPage() {
			t.Fatal("the watchdog found a wake in a page that is gone")
		}
	}
	close(stop)
	<-done
}
