package ptrace

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/hermitdbg/hermit/detcore"
)

// A signalfd is readable when a signal of its mask is pending for the
// thread that polls it: the kernel asks about the poller's signals. So
// hermit's own poll of a guest's signalfd (Poll), or of an epoll that
// holds one, would ask about hermit's, and never see the guest's: such a
// descriptor is ready when the guest's thread has one pending
// (detcore.FdWait.Signals).

// anonInode is the device and inode that every anon_inode file shares
// (signalfd, eventfd, epoll, timerfd).
var anonInode = sync.OnceValue(func() (id [2]uint64) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return id
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		id = [2]uint64{st.Dev, st.Ino}
	}
	return id
})

// signalPoll says how Poll is to treat descriptor fd of thread tid (h,
// hermit's copy), whose process has made a signalfd:
//   - ready: it is a signalfd with a signal of its mask pending for the
//     guest's thread, or an epoll that holds one;
//   - own: hermit must not poll it itself. A signalfd: its readiness is
//     the answer. An epoll that holds one: hermit's poll of it would look
//     at the signalfd with hermit's signals, find none and drop it from
//     the epoll's ready list, where a signal sent meanwhile had put it,
//     and the guest's epoll_wait would then sleep with the signal
//     pending. Its other descriptors (members) are polled in its place.
func (t *Tracer) signalPoll(tid, fd int, h *held) (ready, own bool, members []detcore.FdWait) {
	if h.stErr != nil || [2]uint64{h.st.Dev, h.st.Ino} != anonInode() {
		return false, false, nil
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", h.fd))
	if err != nil {
		return false, false, nil
	}
	switch link {
	case "anon_inode:[signalfd]":
		return t.signalfdReady(tid, fd), true, nil
	case "anon_inode:[eventpoll]":
		signals := false
		for _, m := range epollMembers(tid, fd) {
			if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", tid, m.Fd)); l == "anon_inode:[signalfd]" {
				signals = true
				if m.Events&unix.EPOLLIN != 0 && t.signalfdReady(tid, m.Fd) {
					return true, true, nil
				}
				continue
			}
			members = append(members, m)
		}
		if signals {
			return false, true, members
		}
	}
	return false, false, nil
}

// signalfdReady reports whether signalfd fd of thread tid has a signal to
// read: one of its mask pending for the thread or its process.
func (t *Tracer) signalfdReady(tid, fd int) bool {
	m := fdinfoFields(tid, fd, "sigmask")
	if len(m) == 0 {
		return false
	}
	mask, err := strconv.ParseUint(strings.TrimSpace(m[0]), 16, 64)
	if err != nil {
		return false
	}
	own, shared, _, err := t.Signals(tid)
	return err == nil && (own|shared)&mask != 0
}

// epollMembers returns the descriptors epoll descriptor fd of thread tid
// watches, with the events it asks for (poll's bits; EPOLLET and the
// like left out), from its fdinfo's "tfd: N events: X ..." lines.
func epollMembers(tid, fd int) []detcore.FdWait {
	var ms []detcore.FdWait
	for _, v := range fdinfoFields(tid, fd, "tfd") {
		f := strings.Fields(v)
		if len(f) < 3 {
			continue
		}
		n, err1 := strconv.Atoi(f[0])
		ev, err2 := strconv.ParseUint(f[2], 16, 32)
		if err1 == nil && err2 == nil {
			ms = append(ms, detcore.FdWait{Tid: tid, Fd: n, Events: int16(ev & 0x3fff)})
		}
	}
	return ms
}

// fdinfoFields returns the values of the lines of /proc/TID/fdinfo/FD
// named key.
func fdinfoFields(tid, fd int, key string) []string {
	f, err := procOpen(fmt.Sprintf("/proc/%d/fdinfo/%d", tid, fd))
	if err != nil {
		return nil
	}
	defer f.Close()
	var vs []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && k == key {
			vs = append(vs, strings.TrimSpace(v))
		}
	}
	return vs
}
