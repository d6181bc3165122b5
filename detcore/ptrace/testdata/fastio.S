/*
 * hermit's fast writes (see detcore/fastio.go): the code hermit maps at
 * fioBase+0x3000 in every program that has a clock page at fioBase. The
 * seccomp filter lets through any syscall made from the first of its two
 * pages (the FAST page), and traces the others as usual.
 *
 * A write site in libc (mov $1, %eax; syscall), once hermit has seen a
 * write there, jumps to a stub of its own in the SLOW page instead of
 * setting eax: the stub steps over the red zone, pushes the address after
 * the site's syscall instruction and enters fio_fast with eax = 1. The
 * site's syscall instruction and what follows stay as they were.
 *
 * fio_fast makes the write from the fast page (no ptrace stop) when hermit
 * allows it (the page's FAST word: the thread runs alone, not counted, not
 * traced by a guest's tracer), the page's clock is below its limit, and
 * the descriptor's entry in hermit's table allows writes and the
 * descriptor is still the one hermit entered: its open file description
 * carries hermit's mark (F_GETSIG: 1 + fd % 64, which hermit set with
 * F_SETSIG; a file opened again on a closed number has none, even if it
 * is the same inode) and names the same file (fstat: st_dev, st_ino). It then marks the entry written at the
 * clock's value, counts the call and moves the clock on by a step, as a
 * trapped write's scheduling turn would. Otherwise fio_slow makes the call
 * from the slow page, traced as always (and a restarted call lands on a
 * syscall instruction there).
 *
 * The table (DATA + TABLE): 256 entries of 32 bytes, by descriptor:
 *   0 st_dev  8 st_ino  16 flags (FL_READ: may read; FL_WRITE: may write;
 *   FL_WRITTEN: written since hermit looked; FL_PIPE: a pipe)  24 the clock
 *   at the last write
 *
 * A read site (glibc's read: cmpb $0, __libc_single_threaded(%rip); je
 * multi; xor %eax, %eax; syscall) gets a jmp to its stub over its cmpb:
 * the stub makes the test itself, jumps to the multi-threaded path or, on
 * the single-threaded one, enters fio_read as a write's stub enters
 * fio_fast (a write's). A read counts its call but marks nothing.
 *
 * Registers: as after the syscall (rcx and r11 clobbered), all others kept.
 * Regenerate zvclock.go after a change: go generate ./detcore/ptrace
 */
	.intel_syntax noprefix
	.text
	.include "testdata/page.inc"
	.set FAST, 32
	.set CALLS, 40
	.set DIRTY, 48
	.set RCALLS, 56
	.set WDIGEST, 0x138
	.set TABLE, 0x1000
	.set E_DEV, 0
	.set E_INO, 8
	.set E_FLAGS, 16
	.set E_TIME, 24
	.set FL_READ, 1
	.set FL_WRITE, 2
	.set FL_WRITTEN, 4
	.set FL_PIPE, 8
	.set STATSZ, 144

/* The code's first byte, at the page's address + 0x3000 (a local label,
 * so that rip-relative addresses from it are resolved here). */
fio_code:

/* FIO name, flag: the fast path of a call (its number in eax) on a
 * descriptor whose entry has flag; a write to a file marks its entry.
 * An entry with FL_PIPE (a pipe or FIFO whose data comes only from the
 * guest) needs FAST = 2 (the thread is the guest's only one) and a call
 * that does not wait: a read finds bytes in the pipe (FIONREAD), a write
 * of at most a page finds room for itself and a page more (F_GETPIPE_SZ
 * less FIONREAD), so that it neither waits nor is cut short. */
	.macro FIO name, flag
	.globl \name
\name:
	movabs r11, DATA
	cmp qword ptr [r11 + FAST], 0
	je fio_slow
	mov rcx, [r11 + NOW]
	cmp rcx, [r11 + LIMIT]
	jae fio_slow
	cmp edi, 256
	jae fio_slow
	mov ecx, edi
	shl ecx, 5
	test byte ptr [r11 + rcx + TABLE + E_FLAGS], \flag
	jz fio_slow
	test byte ptr [r11 + rcx + TABLE + E_FLAGS], FL_PIPE
	jz 2f
	cmp qword ptr [r11 + FAST], 2
	jne fio_slow
2:	sub rsp, STATSZ + 24
	mov [rsp + STATSZ], rax
	mov [rsp + STATSZ + 8], rsi
	mov [rsp + STATSZ + 16], rdx
	mov eax, 72 /* SYS_fcntl */
	mov esi, 11 /* F_GETSIG */
	syscall
	mov ecx, edi
	and ecx, 63
	inc ecx
	cmp eax, ecx
	jne 1f
	mov eax, 5 /* SYS_fstat */
	mov rsi, rsp
	syscall
	test rax, rax
	jnz 1f
	movabs r11, DATA
	mov ecx, edi
	shl ecx, 5
	add rcx, r11
	mov rax, [rsp]
	cmp rax, [rcx + TABLE + E_DEV]
	jne 1f
	mov rax, [rsp + 8]
	cmp rax, [rcx + TABLE + E_INO]
	jne 1f
	test byte ptr [rcx + TABLE + E_FLAGS], FL_PIPE
	jz 3f
	mov eax, 16 /* SYS_ioctl */
	mov esi, 0x541b /* FIONREAD */
	mov rdx, rsp
	syscall
	test rax, rax
	jnz 1f
	mov rdx, [rsp + STATSZ + 16]
	.if \flag == FL_READ
	cmp dword ptr [rsp], 0
	jle 1f
	.else
	cmp rdx, 4096
	ja 1f
	mov eax, 72 /* SYS_fcntl */
	mov esi, 1032 /* F_GETPIPE_SZ */
	syscall
	test rax, rax
	js 1f
	mov ecx, dword ptr [rsp]
	add rcx, [rsp + STATSZ + 16]
	add rcx, 4096
	cmp rcx, rax
	ja 1f
	.endif
	movabs r11, DATA
	mov ecx, edi
	shl ecx, 5
	add rcx, r11
3:	mov rax, [r11 + NOW]
	.if \flag == FL_WRITE
	test byte ptr [rcx + TABLE + E_FLAGS], FL_PIPE
	jnz 4f
	mov [rcx + TABLE + E_TIME], rax
	or byte ptr [rcx + TABLE + E_FLAGS], FL_WRITTEN
	inc qword ptr [r11 + DIRTY]
4:	inc qword ptr [r11 + CALLS]
	.else
	inc qword ptr [r11 + RCALLS]
	.endif
	add rax, [r11 + STEP]
	mov [r11 + NOW], rax
	mov rax, [rsp + STATSZ]
	mov rsi, [rsp + STATSZ + 8]
	mov rdx, [rsp + STATSZ + 16]
	add rsp, STATSZ + 24
	syscall
	.if \flag == FL_WRITE
	/* The digest of the bytes written without a stop (WDIGEST), which
	 * hermit keeps in a recording and checks in its replay: of n bytes
	 * written, h = n, then h = rol((h ^ w) * K, 29) for each 8-byte word
	 * w and h = (h ^ b) * K for each byte b left; WDIGEST becomes
	 * (WDIGEST ^ h) * K. */
	test rax, rax
	jle 6f
	push rax
	push rsi
	push rdx
	mov rdx, rax
	mov rcx, rax
5:	cmp rdx, 8
	jb 7f
	xor rcx, [rsi]
	imul rcx, rcx, 0x5bd1e995
	rol rcx, 29
	add rsi, 8
	sub rdx, 8
	jmp 5b
7:	test rdx, rdx
	jz 8f
	movzx eax, byte ptr [rsi]
	xor rcx, rax
	imul rcx, rcx, 0x5bd1e995
	inc rsi
	dec rdx
	jmp 7b
8:	movabs r11, DATA
	xor rcx, [r11 + WDIGEST]
	imul rcx, rcx, 0x5bd1e995
	mov [r11 + WDIGEST], rcx
	pop rdx
	pop rsi
	pop rax
6:
	.endif
	pop r11
	lea rsp, [rsp + 128]
	jmp r11
1:	mov rax, [rsp + STATSZ]
	mov rsi, [rsp + STATSZ + 8]
	mov rdx, [rsp + STATSZ + 16]
	add rsp, STATSZ + 24
	jmp fio_slow
	.endm

	FIO fio_fast, FL_WRITE
	FIO fio_read, FL_READ

/* fio_futex: a futex site's stub (fio_fstub) enters here with r11 = the
 * address of the site's syscall instruction, every register as the
 * syscall would find it. A FUTEX_WAKE_PRIVATE of a positive count, when
 * hermit allows it (FAST, and FX_ON: the table is this process's), the
 * page's clock is below its limit and no wake waits for hermit yet
 * (FX_PEND), is answered here: the word's slot in the table gives the
 * count (128 slots of 16 bytes, the word and its waiters, from (address
 * >> 2) % 128 on to the first empty one: hermit fills at most half).
 * With waiters, the wake is left for hermit to make at the next stop
 * (FX_ADDR, FX_N, then FX_PEND: until that store, nothing is done); the
 * thread's syscall user dispatch is turned on (prctl from this page)
 * unless it is (FX_SUD), its switch (FX_SEL) blocking, so that its next
 * syscall stops, whichever it is; and its fast calls end, with its
 * clock limit at most FX_QUANT from now, as if it were counted: another
 * thread is ready. The clock
 * moves on by a step, as a trapped call's turn would.
 * Otherwise the call is made at the site, as before (eax = 202); but a
 * futex call while a wake waits for hermit is made from the slow page,
 * which the switch does not block, so that it costs one stop, not two.
 * Registers: rax is the result, rcx and r11 are clobbered (as by a
 * syscall); the stack is used only below the red zone and not at the
 * site's own call, so a wait at the site stays at the site. */
	.set FX_ON, 0x100
	.set FX_PEND, 0x108
	.set FX_ADDR, 0x110
	.set FX_N, 0x118
	.set FX_QUANT, 0x120
	.set FX_CALLS, 0x128
	.set FX_SEL, 0x130
	.set FX_SUD, 0x140
	.set FX_TABLE, 0x400
	.set FX_SLOTS, 128
	.globl fio_futex
fio_futex:
	cmp eax, 202 /* SYS_futex */
	jne 9f
	cmp qword ptr [rip + fio_code - 0x3000 + FX_PEND], 0
	jne 7f
	cmp esi, 0x81 /* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
	jne 8f
	test edx, edx
	jle 8f
	test edi, 3
	jnz 8f
	lea rax, [rip + fio_code - 0x3000]
	cmp qword ptr [rax + FAST], 0
	je 8f
	cmp qword ptr [rax + FX_ON], 0
	je 8f
	cmp qword ptr [rax + FX_PEND], 0
	jne 8f
	mov rcx, [rax + NOW]
	cmp rcx, [rax + LIMIT]
	jae 8f
	mov ecx, edi
	shr ecx, 2
	and ecx, FX_SLOTS - 1
	shl ecx, 4
4:	cmp [rax + rcx + FX_TABLE], rdi
	je 2f
	cmp qword ptr [rax + rcx + FX_TABLE], 0
	je 5f
	add ecx, 16
	and ecx, FX_SLOTS * 16 - 1
	jmp 4b
	/* no waiter: none woken */
5:	mov qword ptr [rax + FX_N], 0
	jmp 3f
2:	mov rcx, [rax + rcx + FX_TABLE + 8]
	cmp ecx, edx
	jbe 1f
	mov ecx, edx
1:	mov [rax + FX_ADDR], rdi
	mov [rax + FX_N], rcx
	mov qword ptr [rax + FX_PEND], 1
	mov byte ptr [rax + FX_SEL], 1
	mov qword ptr [rax + FAST], 0
	/* The thread's syscall user dispatch goes on, unless it is (FX_SUD:
	 * hermit turns it off again once the thread has run a while without
	 * such a wake, as while on each syscall costs the kernel a look at
	 * the switch). */
	cmp qword ptr [rax + FX_SUD], 0
	jne 6f
	mov qword ptr [rax + FX_SUD], 1
	lea rsp, [rsp - 128]
	push rdi
	push rsi
	push rdx
	push r10
	push r8
	push r11
	mov edi, 59 /* PR_SET_SYSCALL_USER_DISPATCH */
	mov esi, 1 /* PR_SYS_DISPATCH_ON */
	lea rdx, [rip + fio_code]
	mov r10d, 0x2000 /* the fast and the slow page */
	lea r8, [rax + FX_SEL]
	mov eax, 157 /* SYS_prctl */
	syscall
	pop r11
	pop r8
	pop r10
	pop rdx
	pop rsi
	pop rdi
	lea rsp, [rsp + 128]
	lea rax, [rip + fio_code - 0x3000]
6:	mov rcx, [rax + NOW]
	add rcx, [rax + FX_QUANT]
	cmp rcx, [rax + LIMIT]
	jae 3f
	mov [rax + LIMIT], rcx
3:	inc qword ptr [rax + FX_CALLS]
	mov rcx, [rax + NOW]
	add rcx, [rax + STEP]
	mov [rax + NOW], rcx
	mov rax, [rax + FX_N]
	add r11, 2
	jmp r11
8:	mov eax, 202
9:	jmp r11
	/* A wake of this thread's waits for hermit: the call is made from
	 * the slow page, where the switch does not block it, and its stop is
	 * the one at which hermit makes the wake. */
7:	lea rsp, [rsp - 128]
	add r11, 2
	push r11
	jmp fio_slow
/* fio_tsc and fio_tscp: a patched rdtsc or rdtscp site jumps to a stub of
 * its own (fastio.go: tscStub), which steps over the red zone and calls
 * here, then has the instruction itself, the site's instructions that the
 * jmp replaced, and a jmp back. When hermit allows it (TSC, the step of a
 * read, is not 0: the running thread's rdtsc would trap to hermit), the
 * page serves CLOCK_MONOTONIC (its base) and the page's clock is below its
 * limit, the clock moves on by TSC and edx:eax is the time-stamp counter
 * at the new time, 3
 * ticks a ns (detcore.TSCHz), as a trapped read answers; rdtscp's ecx is
 * 0 (IA32_TSC_AUX: CPU 0). It then returns past the instruction, else to
 * it, and the instruction traps. Either way `ret 128` steps back over the
 * red zone. Flags and every other register are kept. The code may run
 * from a second copy of these pages (near an executable, out of reach of
 * the first): it finds the page by its address. */
	.set MONO, 64 + 8 /* base[CLOCK_MONOTONIC] */
	.set TSC, 0x148
	.set TSCREADS, 0x150
	.macro TSCREAD name, len
	.globl \name
\name:
	pushfq
	push rcx
	movabs rcx, DATA
	cmp qword ptr [rcx + TSC], 0
	je 1f
	mov rax, [rcx + MONO]
	test rax, rax
	jz 1f
	mov rdx, [rcx + NOW]
	cmp rdx, [rcx + LIMIT]
	jae 1f
	add rdx, [rcx + TSC]
	mov [rcx + NOW], rdx
	inc qword ptr [rcx + TSCREADS]
	add rax, rdx
	lea rax, [rax + rax * 2]
	mov rdx, rax
	shr rdx, 32
	mov eax, eax
	add qword ptr [rsp + 16], \len
	.if \len == 3
	add rsp, 8
	xor ecx, ecx
	.else
	pop rcx
	.endif
	popfq
	ret 128
1:	pop rcx
	popfq
	ret 128
	.endm

	TSCREAD fio_tsc, 2
	TSCREAD fio_tscp, 3

	.globl fio_fast_end
fio_fast_end:

	.org 0x1000
	.globl fio_slow
fio_slow:
	syscall
	pop r11
	lea rsp, [rsp + 128]
	jmp r11
	.globl fio_slow_end
fio_slow_end:

/* A site's stub, without its final jmp rel32 to fio_fast (hermit adds it);
 * DATA stands for the address after the site's syscall instruction. */
	.globl fio_stub
fio_stub:
	lea rsp, [rsp - 128]
	movabs r11, DATA
	push r11
	mov eax, 1 /* SYS_write */
	.globl fio_stub_end
fio_stub_end:

/* A futex site's stub, without its final jmp rel32 to fio_futex: hermit
 * puts the site's own 5-byte instruction (the one it replaced by its jmp
 * here) before it. DATA stands for the address of the site's syscall
 * instruction. */
	.globl fio_fstub
fio_fstub:
	movabs r11, DATA
	.globl fio_fstub_end
fio_fstub_end:

/* A read site's stub, without its final jmp rel32 to fio_read: DATA1 is
 * __libc_single_threaded's address, DATA2 the multi-threaded path's,
 * DATA the address after the site's syscall instruction. */
	.set DATA1, 0x5eedc10c5eedc10d
	.set DATA2, 0x5eedc10c5eedc10e
	.globl fio_rstub
fio_rstub:
	movabs r11, DATA1
	cmp byte ptr [r11], 0
	jne 1f
	movabs r11, DATA2
	jmp r11
1:	lea rsp, [rsp - 128]
	movabs r11, DATA
	push r11
	xor eax, eax
	.globl fio_rstub_end
fio_rstub_end:
