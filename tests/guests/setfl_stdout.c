/* setfl_stdout: makes stdout non-blocking with the flags F_GETFL gives,
 * then puts them back, as Node does at its start. Those flags follow
 * what stdout is (a pipe: O_WRONLY; a file: O_WRONLY|O_LARGEFILE; a
 * terminal: O_RDWR), and a replay's stdout need not be what the
 * recording's was.
 */
#include "guest.h"
#include <fcntl.h>

int main(void) {
	int fl = fcntl(1, F_GETFL);
	CHECK(fl >= 0);
	CHECK(fcntl(1, F_SETFL, fl | O_NONBLOCK) == 0);
	CHECK(fcntl(1, F_SETFL, fl) == 0);
	printf("stdout made non-blocking and back\n");
	return 0;
}
