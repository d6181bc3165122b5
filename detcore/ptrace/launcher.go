package ptrace

// #cgo CFLAGS: -O2 -Wall
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The C constructor in launcher.c is linked into every binary that imports
// this package; it takes over the process only when HERMIT_LAUNCH_MODE is
// set in the environment.

// Environment variables that configure the launcher; the guest never sees
// them.
const (
	envMode     = "HERMIT_LAUNCH_MODE"
	envFilter   = "HERMIT_LAUNCH_FILTER"
	envTSC      = "HERMIT_LAUNCH_TSC"
	envErrFd    = "HERMIT_LAUNCH_ERRFD"
	envHostname = "HERMIT_LAUNCH_HOSTNAME"
	envTmp      = "HERMIT_LAUNCH_TMP"
	envFiles    = "HERMIT_LAUNCH_FILES"
	envNet      = "HERMIT_LAUNCH_NET"
	envFds      = "HERMIT_LAUNCH_FDS"
	envForward  = "HERMIT_LAUNCH_FORWARD"
)

// launchedUnreported waits, when the launcher's report did not come
// whole (readErr), until the launcher's child has stopped for the tracer
// all the same, or the launcher has exited; it waited for the launcher's
// exit alone, and hung where the launcher and its stopped child lived on.
func (t *Tracer) launchedUnreported(name string, readErr error) (int, error) {
	for deadline := time.Now().Add(launchLimit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if p, ws, err := wait4(t.initPid, unix.WNOHANG); err != nil || p == t.initPid {
			return 0, fmt.Errorf("%s: the launcher exited before the program started (status %#x)", name, int(ws))
		}
		bs, _ := readProcFile(fmt.Sprintf("/proc/%d/task/%d/children", t.initPid, t.initPid))
		if f := strings.Fields(string(bs)); len(f) > 0 {
			if pid, err := strconv.Atoi(f[0]); err == nil {
				if st := procState(pid); st == 'T' || st == 't' {
					return pid, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: the launcher did not start the guest within %v (its report: %v)", name, launchLimit, readErr)
}

// launchMu keeps a launcher's inheritable pipe from others (Start).
var launchMu sync.Mutex
