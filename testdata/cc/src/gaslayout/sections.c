/* sections.c: what makes gcc put code and data in many sections: cold
   paths (.text.unlikely, foo.cold), start-up code (.text.startup),
   constructors (.init_array), thread-local data (.tdata, .tbss), data
   aligned past 8 (the BFD of binutils 2.47 aligns the file offsets of an
   object's sections to at most 8), merged strings and constants, a jump
   table, weak and custom-section functions. For the live whole-file
   comparison with GNU as (cmd/sframe-gen TestGasLayoutLive). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread int tls_counter = 3;
__thread char tls_buf[64];
static char page[4096] __attribute__((aligned(4096)));
long table64[8] __attribute__((aligned(64))) = {1, 2, 3, 4, 5, 6, 7, 8};
static const double consts[4] = {1.5, 2.25, 3.125, 4.0625};
static jmp_buf env;
int (*hook)(int);

__attribute__((cold, noinline)) static void fail(const char *why, int code) {
	fprintf(stderr, "failed: %s (%d)\n", why, code);
	exit(code);
}

__attribute__((constructor)) static void setup(void) { hook = abs; }

__attribute__((weak)) int weak_fn(int x) { return x * 3 + tls_counter; }

__attribute__((section(".text.custom"), noinline)) int custom(int x) { return x ^ 0x5a; }

int dispatch(int op, int a, int b) {
	switch (op) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	case 3: return b ? a / b : 0;
	case 4: return a % (b | 1);
	case 5: return a << (b & 7);
	case 6: return a >> (b & 7);
	case 7: return (int)consts[(a ^ b) & 3];
	default:
		if (__builtin_expect(op > 100, 0))
			fail("bad op", op);
		return -1;
	}
}

int sum(int n, ...) {
	va_list ap;
	int s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

int vla(int n) {
	int a[n];
	for (int i = 0; i < n; i++)
		a[i] = dispatch(i & 7, i, n);
	int s = 0;
	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

int jump(int n) {
	if (setjmp(env))
		return -n;
	if (n > 10)
		longjmp(env, 1);
	return n;
}

char *fill(int c) {
	memset(page, c, sizeof page);
	snprintf(tls_buf, sizeof tls_buf, "%s-%d", "fill", c);
	return tls_buf;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5;
	printf("%d %d %d %d %d %s %ld\n", vla(n), sum(3, n, n, n), jump(n), weak_fn(n), custom(n) + hook(-n), fill(n), table64[n & 7]);
	return 0;
}
