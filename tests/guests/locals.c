// locals has a function whose locals and parameters are a struct, a
// pointer to it, an array and a nested block's variable, for a debugger's
// print: it writes a line from the innermost block (a breakpoint on the
// write stops there) and prints the sum.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct point {
	int x, y;
	const char *label;
};

int counter = 7;

static int area(struct point *corner, int scale) {
	struct point origin = {3, 4, "origin"};
	int sides[3] = {10, 20, 30};
	int total = corner->x * corner->y * scale;
	for (int i = 0; i < 1; i++) {
		int inner = total + sides[2] + origin.y;
		char msg[64];
		int n = snprintf(msg, sizeof msg, "inner %d\n", inner);
		if (write(1, msg, (size_t)n) != n)
			return -1;
		total = inner;
	}
	return total;
}

int main(void) {
	struct point p = {5, 6, "corner"};
	printf("area %d\n", area(&p, 2) + counter);
	return 0;
}
