/* lines: prints argv[1] numbered lines, one write(2) each, so that a
 * recording of it holds at least that many events.
 *
 * Checks replay of a damaged trace: the events file is cut, and the replay
 * must print a prefix of these lines and then report the damage.
 */
#include "guest.h"

int main(int argc, char **argv) {
	if (argc != 2) {
		sayfd(2, "usage: lines N\n");
		return 2;
	}
	long n = atol(argv[1]);
	for (long i = 0; i < n; i++)
		say("line %ld\n", i);
	return 0;
}
