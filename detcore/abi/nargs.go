package abi

// NumArgs returns how many arguments syscall nr takes on x86-64, or 6
// for a number it does not know. The registers past them hold whatever
// the caller left there (glibc's syscall() passes all six; a dynamic
// loader leaves rdtsc's value in one), which a check of a call's
// arguments must not look at.
func NumArgs(nr int) int {
	if nr >= 0 && nr < len(numArgs) {
		return int(numArgs[nr])
	}
	if n, ok := numArgsHigh[nr]; ok {
		return n
	}
	return 6
}

// numArgs is indexed by syscall number, from read (0) to rseq (334).
var numArgs = [...]uint8{
	3, 3, 3, 1, 2, 2, 2, 3, 3, 6, 3, 2, 1, 4, 4, 0, 3, 4, 4, 3, 3, 2, 1, 5, 0, 5, 3, 3, 3, 3, 3, 3, 1, 2, 0, 2, 2, 1, 3, 0,
	4, 3, 3, 3, 6, 6, 3, 3, 2, 3, 2, 3, 3, 4, 5, 5, 5, 0, 0, 3, 1, 4, 2, 1, 3, 3, 4, 1, 2, 4, 5, 3, 3, 2, 1, 1, 2, 2, 3, 2,
	1, 1, 2, 2, 1, 2, 2, 1, 2, 3, 2, 2, 3, 3, 3, 1, 2, 2, 2, 1, 1, 4, 0, 3, 0, 1, 1, 0, 0, 2, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3,
	3, 1, 1, 1, 1, 2, 2, 2, 4, 3, 2, 2, 2, 3, 1, 1, 2, 2, 2, 3, 2, 3, 2, 2, 3, 1, 1, 1, 2, 2, 2, 1, 0, 0, 3, 2, 1, 5, 2, 1,
	2, 1, 0, 1, 2, 5, 2, 2, 1, 4, 2, 2, 1, 3, 2, 3, 2, 1, 5, 4, 3, 5, 5, 5, 3, 3, 0, 3, 5, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2,
	2, 1, 6, 3, 3, 1, 2, 1, 5, 3, 3, 1, 3, 1, 4, 4, 5, 3, 1, 0, 4, 4, 3, 4, 2, 1, 1, 2, 2, 2, 4, 1, 4, 4, 3, 2, 5, 6, 3, 5,
	4, 1, 5, 5, 2, 3, 4, 5, 5, 4, 5, 3, 2, 0, 3, 2, 4, 4, 3, 4, 5, 3, 4, 3, 4, 5, 3, 4, 3, 3, 6, 5, 1, 2, 3, 6, 4, 4, 4, 6,
	4, 6, 3, 2, 1, 4, 4, 2, 4, 4, 2, 1, 3, 2, 1, 4, 4, 4, 5, 5, 2, 5, 4, 5, 3, 2, 1, 4, 2, 3, 6, 6, 5, 3, 3, 4, 5, 3, 3, 2,
	5, 3, 5, 1, 3, 3, 6, 6, 6, 4, 2, 1, 5, 6, 4,
}

// numArgsHigh covers pidfd_send_signal (424) onwards.
var numArgsHigh = map[int]int{424: 4, 425: 2, 426: 6, 427: 4, 428: 3, 429: 5, 430: 2, 431: 5, 432: 3, 433: 3, 434: 2, 435: 2, 436: 3, 437: 4, 438: 3, 439: 4, 440: 5, 441: 6, 442: 5, 443: 4, 444: 3, 445: 4, 446: 2, 447: 1, 448: 2, 449: 5, 450: 4, 451: 4, 452: 4, 453: 3, 454: 4, 455: 6, 456: 4}
