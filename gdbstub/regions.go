package gdbstub

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end uint64
	perms      string // lldb's: some of r, w, x
	name       string
}

// memoryRegionInfo answers lldb's qMemoryRegionInfo:ADDR from the
// process's /proc/PID/maps, which the target serves (Open): the mapping
// that holds ADDR, or else the unmapped gap around it. lldb finds the
// vDSO so ("memory region" too); a target without the file gets the
// empty reply, as before.
func (s *session) memoryRegionInfo(r *request) []byte {
	addr, err := strconv.ParseUint(strings.TrimPrefix(r.args, ":"), 16, 64)
	if err != nil {
		return errReply
	}
	f, err := s.t.Open(fmt.Sprintf("/proc/%d/maps", s.t.Pid()))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil
	}
	gap := uint64(0) // where the unmapped range before the next mapping starts
	for _, m := range parseMaps(b) {
		switch {
		case addr < m.start:
			return fmt.Appendf(nil, "start:%x;size:%x;", gap, m.start-gap)
		case addr < m.end:
			reply := fmt.Appendf(nil, "start:%x;size:%x;permissions:%s;", m.start, m.end-m.start, m.perms)
			if m.name != "" {
				reply = fmt.Appendf(reply, "name:%s;", hex.EncodeToString([]byte(m.name)))
			}
			return reply
		}
		gap = m.end
	}
	return fmt.Appendf(nil, "start:%x;size:%x;", gap, ^uint64(0)-gap)
}

// parseMaps parses /proc/PID/maps, in its order (by address); lines it
// cannot read are left out.
func parseMaps(b []byte) []mapping {
	var rs []mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start || len(f[1]) < 3 {
			continue
		}
		var perms []byte
		for i, c := range []byte("rwx") {
			if f[1][i] == c {
				perms = append(perms, c)
			}
		}
		m := mapping{start: start, end: end, perms: string(perms)}
		if len(f) > 5 {
			m.name = strings.Join(f[5:], " ")
		}
		rs = append(rs, m)
	}
	return rs
}
