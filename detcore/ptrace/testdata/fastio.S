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
