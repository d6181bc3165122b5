package ptrace

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Caught implements detcore.Tracer.Caught from SigIgn and SigCgt in
// /proc/TID/status (SigIgn comes first).
func (t *Tracer) Caught(tid int) (caught, ignored uint64, err error) {
	f, err := procOpen(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, 0, gone(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "SigIgn:"); ok {
			ignored, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		} else if v, ok := strings.CutPrefix(s.Text(), "SigCgt:"); ok {
			caught, err2 := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return caught, ignored, errors.Join(err, err2)
		}
	}
	if err := s.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("no SigCgt in /proc/%d/status", tid)
}
