/* tls_lib: a library with a thread-local variable, which tls_vars.c
 * loads with dlopen: its TLS block is allocated per thread on first use,
 * where the thread's dtv points. */
__thread long lib_tls = 5;

long lib_set(long v) {
	lib_tls += v;
	return lib_tls;
}
