package ptrace

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// SendSignal sends sig from hermit to thread tid, or, with process, to
// its process (as kill(2) does), through Signal: a replay gives the guest
// a signal that its recording got from outside, knowing only the thread.
func (t *Tracer) SendSignal(tid, sig int, process bool) error {
	tgid, err := tgidOf(tid)
	if err != nil {
		return err
	}
	if process {
		tid = 0
	}
	return t.Signal(tgid, tid, sig, nil)
}

// tgidOf returns the process of thread tid.
func tgidOf(tid int) (int, error) {
	f, err := procOpen(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, gone(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no Tgid", tid)
}
