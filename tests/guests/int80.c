/* int80: 32-bit system calls (int $0x80) from a 64-bit program. hermit's
 * filter answers them with ENOSYS, the same in the recording and the
 * replay.
 */
#include "guest.h"

int main(void) {
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory"); /* i386 getpid */
	say("int $0x80 getpid: %ld\n", ret);
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(4L), "b"(1L), "c"("x\n"), "d"(2L) : "memory"); /* i386 write */
	say("int $0x80 write: %ld\n", ret);
	say("getpid: %d\n", getpid());
	return 0;
}
