/* The program of the shared-library chain (libchain.c). */
volatile long chain_sink;
long chain1(long);
long chain_cb(long x) {
	for (volatile int i = 0; i < 10; i++)
		chain_sink ^= x;
	return x & 7;
}
int main(void) {
	for (long x = 0;; x++)
		chain_sink += chain1(x);
}
