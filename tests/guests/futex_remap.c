/* futex_remap: a parent waits on a futex word in shared anonymous memory
 * that a forked child sets and wakes, twice, each time in a new mapping
 * that the kernel puts where the last one was (munmap, then mmap): as
 * multiprocessing's semaphores are. Each wake must reach the parent.
 */
#include "guest.h"

#include <linux/futex.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long futex(uint32_t *w, int op, uint32_t v) { return syscall(SYS_futex, w, op, v, NULL, NULL, 0); }

int main(void) {
	void *first = NULL;
	for (int round = 0; round < 2; round++) {
		uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		CHECK(w != MAP_FAILED);
		if (round == 0)
			first = w;
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			usleep(100000);
			__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
			long n = futex(w, FUTEX_WAKE, 1);
			say("round %d: the child woke %ld\n", round, n);
			_exit(0);
		}
		while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == 0)
			futex(w, FUTEX_WAIT, 0);
		CHECK(waitpid(pid, NULL, 0) == pid);
		say("round %d: the parent woke, %s mapping\n", round, (void *)w == first ? "the same" : "another");
		CHECK(munmap(w, 4096) == 0);
	}
	return 0;
}
