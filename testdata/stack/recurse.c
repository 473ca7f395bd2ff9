/* Deep recursion with work at the bottom; built -O2 -fomit-frame-pointer
   and -O0. */
volatile long sink;
__attribute__((noinline)) long rec(int n) {
	if (n == 0) {
		for (volatile int i = 0; i < 200; i++)
			sink += i;
		return 1;
	}
	return rec(n - 1) + n;
}
int main(void) {
	for (;;)
		sink += rec(40 + (int)(sink & 15));
}
