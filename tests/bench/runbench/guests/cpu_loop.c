/* cpu_loop: argv[1] iterations of a linear congruential generator, with no
 * syscalls in the loop. Measures the overhead hermit adds to pure computation
 * (target: none). Prints the result so the loop is not optimised away.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	unsigned long n = strtoul(argv[1], NULL, 10), x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	printf("%lu\n", x);
	return 0;
}
