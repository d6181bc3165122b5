#include "textflag.h"

// func getregs() (pc, sp, bp uintptr)
TEXT ·getregs(SB), NOSPLIT, $0-24
	MOVQ 0(SP), AX
	MOVQ AX, pc+0(FP)
	LEAQ 8(SP), AX
	MOVQ AX, sp+8(FP)
	MOVQ BP, bp+16(FP)
	RET
