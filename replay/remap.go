package replay

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// mremap flags (<linux/mman.h>).
const mremapFixed = 2

// remap runs an mremap that moved a mapping where the kernel chose, at
// the recorded address addr: the choice depends on the file's filesystem
// (huge-page alignment), which replay's is not. MREMAP_FIXED replaces
// whatever is mapped there, so replay first checks that nothing is: in
// the recording the kernel chose a free range.
func (p *player) remap(c *detcore.Call, addr int64) detcore.Outcome {
	size := c.Args[2]
	if busy, err := mapped(c.Tid, uint64(addr), size); err != nil || busy != "" {
		if err == nil {
			err = fmt.Errorf("%s is mapped there", busy)
		}
		p.diverge(c.Vtid, "expected %s to move the mapping to %#x as recorded, but %v (the memory layout differs)", callString(c.Nr, c.Args), addr, err)
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	args := c.Args
	args[3] |= mremapFixed
	args[4] = uint64(addr)
	p.place[c.Tid] = addr
	return detcore.Outcome{Exit: true, Args: &args}
}

// placeDiffers says why a call replay placed at the recorded address
// failed.
func placeDiffers(c *detcore.Call) string {
	if c.Nr == abi.SYS_MREMAP && c.Result == -abi.EFAULT {
		// The range spans two mappings. The replay's files lie on an
		// overlay filesystem, whose mappings the kernel never merges
		// with their neighbours, as it does those of one file elsewhere.
		return "the range spans two mappings of one file: replay reads its files through an overlay filesystem, " +
			"where the kernel does not merge adjacent mappings as it did in the recording"
	}
	return "the memory layout or descriptor table differs"
}

// mapped returns the first mapping of thread tid's process that overlaps
// [addr, addr+size), as a range, or "" if none does.
func mapped(tid int, addr, size uint64) (string, error) {
	rng, _, err := mappingAt(tid, addr, size)
	return rng, err
}

// executable reports whether addr lies in a mapping of thread tid's
// process that may run code.
func executable(tid int, addr uint64) bool {
	_, perms, err := mappingAt(tid, addr, 1)
	return err == nil && strings.Contains(perms, "x")
}

// mappingAt returns the first mapping of thread tid's process that
// overlaps [addr, addr+size), as a range and its permissions ("r-xp"),
// or "" if none does.
func mappingAt(tid int, addr, size uint64) (rng, perms string, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", tid))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if start < addr+size && addr < end {
			return fields[0], fields[1], nil
		}
	}
	return "", "", sc.Err()
}
