package ptrace

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Caught implements detcore.Tracer.Caught from SigCgt in
// /proc/TID/status.
func (t *Tracer) Caught(tid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, gone(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "SigCgt:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no SigCgt in /proc/%d/status", tid)
}
