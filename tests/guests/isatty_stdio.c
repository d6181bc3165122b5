/* isatty_stdio: asks whether stdin, stdout and stderr are terminals, as
 * programs do at their start to choose how to write (Node, Python, ls).
 */
#include "guest.h"

int main(void) {
	printf("isatty: stdin %d, stdout %d, stderr %d\n", isatty(0), isatty(1), isatty(2));
	return 0;
}
