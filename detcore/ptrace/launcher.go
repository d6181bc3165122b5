package ptrace

// #cgo CFLAGS: -O2 -Wall
import "C"

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
