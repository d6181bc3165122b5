/* null_call: a call through a NULL function pointer, from call_it (the
   frame a backtrace must find above the fault at 0). */
static void (*volatile callback)(void);
__attribute__((noinline)) static void call_it(void) {
	callback(); /* NULL CALL */
}
int main(void) {
	call_it();
	return 0;
}
