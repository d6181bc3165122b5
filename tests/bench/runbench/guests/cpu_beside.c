/* cpu_beside: cpu_loop's computation (argv[1] iterations, no syscalls) in
 * the main thread while a second thread sleeps. A deadline is pending, so
 * hermit's spin detector examines the computing thread now and then
 * (after 20 ms, then twice as long each time it finds no spin); this
 * measures what that costs a CPU-bound program (target 1.05).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sleeper(void *arg) {
	(void)arg;
	sleep(3600);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	pthread_t th;
	if (pthread_create(&th, NULL, sleeper, NULL) != 0)
		return 1;
	unsigned long n = strtoul(argv[1], NULL, 10), x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	printf("%lu\n", x);
	return 0; /* ends the sleeper too */
}
