/*
 * hermit's in-guest clock: the code that replaces the vDSO's
 * clock_gettime, gettimeofday and time in every guest process (see
 * vclock.go). It reads virtual time from a page hermit shares with the
 * guest and advances it by a fixed step per read, so that a clock read
 * costs no ptrace stop. It makes the real syscall (which hermit answers)
 * for a clock the page does not serve, and when the read would reach the
 * page's limit: the next timer's deadline, or the reads a thread may
 * make before another gets its turn.
 *
 * The page (little-endian 64-bit words):
 *   0  now     logical time, ns since the run began: what the next read
 *              reads (plus the clock's base); each read adds step
 *   8  limit   a read of now at limit or past it traps
 *  16  step    ns per read
 *  24  reads   reads answered here
 *  64  base[16] what clock id i adds to now; 0: not served here
 *
 * DATA is a placeholder hermit replaces with the page's address in each
 * process. The code is position-independent otherwise, uses 8 bytes of
 * stack and touches only registers the C ABI lets a callee clobber.
 *
 * Regenerate zvclock.go after a change: go generate ./detcore/ptrace
 */
	.intel_syntax noprefix
	.text
	.include "testdata/page.inc"
	.set READS, 24
	.set BASE, 64

	.globl vc_clock_gettime
/* int clock_gettime(clockid_t id, struct timespec *ts) */
vc_clock_gettime:
	mov ecx, edi
	cmp ecx, 15
	ja 9f
	movabs r8, DATA
	mov r9, [r8 + BASE + rcx*8]
	call advance
	jc 9f
	xor edx, edx
	mov ecx, 1000000000
	div rcx
	mov [rsi], rax
	mov [rsi + 8], rdx
	xor eax, eax
	ret
9:	mov eax, 228 /* SYS_clock_gettime */
	syscall
	ret

	.globl vc_gettimeofday
/* int gettimeofday(struct timeval *tv, struct timezone *tz) */
vc_gettimeofday:
	movabs r8, DATA
	mov r9, [r8 + BASE]
	call advance
	jc 9f
	test rdi, rdi
	jz 1f
	xor edx, edx
	mov ecx, 1000000000
	div rcx
	mov [rdi], rax
	mov eax, edx
	xor edx, edx
	mov ecx, 1000
	div ecx
	mov [rdi + 8], rax
1:	test rsi, rsi
	jz 2f
	mov qword ptr [rsi], 0
2:	xor eax, eax
	ret
9:	mov eax, 96 /* SYS_gettimeofday */
	syscall
	ret

	.globl vc_time
/* time_t time(time_t *t) */
vc_time:
	movabs r8, DATA
	mov r9, [r8 + BASE]
	call advance
	jc 9f
	xor edx, edx
	mov ecx, 1000000000
	div rcx
	test rdi, rdi
	jz 1f
	mov [rdi], rax
1:	ret
9:	mov eax, 201 /* SYS_time */
	syscall
	ret

/* advance reads the page at r8 for the clock whose base is r9: it returns
 * base + now in rax and moves now on by a step, or sets the carry flag
 * when the read must make the syscall (the clock is not served here, or
 * now has reached the limit). */
advance:
	test r9, r9
	jz 1f
	mov rax, [r8 + NOW]
	cmp rax, [r8 + LIMIT]
	jae 1f
	mov r10, rax
	add r10, [r8 + STEP]
	mov [r8 + NOW], r10
	inc qword ptr [r8 + READS]
	add rax, r9
	clc
	ret
1:	stc
	ret
	.globl vc_end
vc_end:

/* vc_map maps a clock page in a program hermit has just exec'd (hermit
 * writes it over code the clock code then replaces, and starts it there):
 * memfd_create and mmap, then int3, where hermit takes its own copy of
 * the descriptor (r12: the descriptor or -errno, r13: the clock page's
 * address or -errno, r14: the fast-write code's address or -errno), then
 * close and int3 again, where hermit gives the thread its registers back.
 * With r15 set, the fast-write code is mapped there too (r15: its address
 * or -errno).
 * The descriptor is gone before the program starts. The page goes at
 * FIO_BASE with the fast-write table after it (three pages, read-write)
 * and the fast-write code (fastio.S, two pages, read-execute) after that;
 * where that address is taken, one page anywhere, and no fast writes.
 * Each call carries INJECTED in the high half of its fourth argument (r10:
 * mmap's flags, which the kernel reads as an int with MAP_SHARED, and
 * unused by memfd_create and close), which hermit's seccomp filter lets
 * through without a stop (injectedMark in filter.go): a stop for each
 * cost a tracer round trip at every exec. */
	.set FIO_BASE, 0x7fffc0000000
	.set INJECTED, 0x6865726d00000000
/* MAP_CODE maps the fast-write code (the memfd r12's two pages from
 * 0x3000, read-execute) at rdi, unless that is taken: rax is its address
 * or -errno. */
	.macro MAP_CODE
	mov eax, 9 /* SYS_mmap */
	mov esi, 0x2000
	mov edx, 5 /* PROT_READ | PROT_EXEC */
	movabs r10, INJECTED | 0x100001 /* MAP_SHARED | MAP_FIXED_NOREPLACE */
	mov r8, r12
	mov r9d, 0x3000
	syscall
	.endm
	.globl vc_map
vc_map:
	mov r14, -1
	mov eax, 319 /* SYS_memfd_create */
	lea rdi, [rip + vc_name]
	mov esi, 1 /* MFD_CLOEXEC */
	movabs r10, INJECTED
	syscall
	mov r12, rax
	mov r13, rax
	test rax, rax
	js 1f
	mov eax, 9 /* SYS_mmap */
	movabs rdi, FIO_BASE
	mov esi, 0x3000
	mov edx, 3 /* PROT_READ | PROT_WRITE */
	movabs r10, INJECTED | 0x100001 /* MAP_SHARED | MAP_FIXED_NOREPLACE */
	mov r8, r12
	xor r9d, r9d
	syscall
	mov r13, rax
	cmp rax, -4095
	jae 3f
	cmp rax, rdi
	jne 1f
	movabs rdi, FIO_BASE + 0x3000
	MAP_CODE
	mov r14, rax
	/* The code again at r15 (hermit's choice: just below the executable,
	 * out of the first copy's reach), for the stubs of sites there; r15
	 * becomes its address or -errno. */
	test r15, r15
	jz 1f
	cmp rax, -4095
	jae 1f
	mov rdi, r15
	MAP_CODE
	mov r15, rax
	jmp 1f
3:	mov eax, 9 /* SYS_mmap */
	xor edi, edi
	mov esi, 4096
	mov edx, 3 /* PROT_READ | PROT_WRITE */
	movabs r10, INJECTED | 1 /* MAP_SHARED */
	mov r8, r12
	xor r9d, r9d
	syscall
	mov r13, rax
1:	int3
	test r12, r12
	js 2f
	mov eax, 3 /* SYS_close */
	mov rdi, r12
	movabs r10, INJECTED
	syscall
2:	int3
vc_name:
	.asciz "hermit-clock"
	.globl vc_map_end
vc_map_end:
