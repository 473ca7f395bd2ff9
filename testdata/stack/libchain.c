/* Three shared libraries calling each other and back into the program:
   built with -DLEVEL=1, 2, 3 as libchain1.so .. libchain3.so. */
extern volatile long chain_sink;
#if LEVEL == 3
long chain_cb(long);
__attribute__((noinline)) long chain3(long x) {
	for (volatile int i = 0; i < 30; i++)
		chain_sink += i;
	return chain_cb(x) + 3;
}
#elif LEVEL == 2
long chain3(long);
__attribute__((noinline)) long chain2(long x) { return chain3(x + 1) * 2; }
#else
long chain2(long);
__attribute__((noinline)) long chain1(long x) { return chain2(x ^ 5) - 1; }
#endif
