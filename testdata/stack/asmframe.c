/* A hand-written assembly function with CFI (asm_<arch>.S) between the
   program's C functions. */
long asm_frame(long (*cb)(long), long x);
volatile long sink;
__attribute__((noinline)) static long callback(long x) {
	for (volatile int i = 0; i < 20; i++)
		sink += x;
	return x;
}
int main(void) {
	for (long x = 0;; x++)
		sink += asm_frame(callback, x);
}
