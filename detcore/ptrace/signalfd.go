package ptrace

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
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

// signalReady reports, for descriptor fd of thread tid (h, hermit's copy),
// whether it is a signalfd (signal: its readiness is the answer), and
// whether it, or a signalfd an epoll descriptor holds, is readable for
// the guest's thread.
func (t *Tracer) signalReady(tid, fd int, h *held) (signal, ready bool) {
	if h.stErr != nil || [2]uint64{h.st.Dev, h.st.Ino} != anonInode() {
		return false, false
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", h.fd))
	if err != nil {
		return false, false
	}
	switch link {
	case "anon_inode:[signalfd]":
		return true, t.signalfdReady(tid, fd)
	case "anon_inode:[eventpoll]":
		for _, m := range fdinfoFields(tid, fd, "tfd") {
			f := strings.Fields(m)
			if len(f) == 0 {
				continue
			}
			if n, err := strconv.Atoi(f[0]); err == nil {
				if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", tid, n)); l == "anon_inode:[signalfd]" && t.signalfdReady(tid, n) {
					return false, true
				}
			}
		}
	}
	return false, false
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
