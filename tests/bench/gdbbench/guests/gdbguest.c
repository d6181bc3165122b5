/* gdbguest: the program the gdb benchmark debugs, natively under gdbserver
 * and as a recording under `hermit replay --gdb-port`.
 *
 * spin() is a busy loop with no calls and no syscalls: gdb breaks at it and
 * then times `stepi N` inside it. hit() is then called argv[1] times in a
 * loop that does nothing else: gdb breaks at it with an ignore count and
 * times continuing through the hits, each a stop and a resume.
 */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long n) {
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 6364136223846793005UL + i;
}

__attribute__((noinline)) void hit(unsigned long i) {
	sink += i;
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	unsigned long n = strtoul(argv[1], NULL, 10);
	spin(1000000);
	for (unsigned long i = 0; i < n; i++)
		hit(i);
	return 0;
}
