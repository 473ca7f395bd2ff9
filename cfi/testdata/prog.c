/* A C program with varied frames, compiled by the cfi tests with several
   compilers and options and compared with readelf's frame tables. */
#include <alloca.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct big { long a[8]; };

static jmp_buf env;

__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) long many(long a, long b, long c, long d, long e, long f) {
	long r1 = leaf(a), r2 = leaf(b), r3 = leaf(c), r4 = leaf(d), r5 = leaf(e), r6 = leaf(f);
	return r1 * r2 + r3 * r4 + r5 * r6 + leaf(r1 + r6);
}

__attribute__((noinline)) long dyn(int n) {
	char *p = alloca(n + 16);
	memset(p, n, n + 16);
	return p[n / 2] + leaf(n);
}

__attribute__((noinline)) long vsum(int n, ...) {
	va_list ap;
	long s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

__attribute__((noinline)) struct big mkbig(long x) {
	struct big b;
	for (int i = 0; i < 8; i++)
		b.a[i] = x + i;
	return b;
}

__attribute__((noinline)) long rec(long n) { return n < 2 ? n : rec(n - 1) + rec(n - 2); }

__attribute__((noinline)) long early(long x) {
	if (x > 100)
		return leaf(x);
	long v[32];
	for (int i = 0; i < 32; i++)
		v[i] = leaf(x + i);
	return v[x & 31];
}

__attribute__((noinline, noreturn)) void die(const char *msg) {
	fprintf(stderr, "%s\n", msg);
	longjmp(env, 1);
}

__attribute__((noinline)) double fp(double a, double b) { return a * b + (double)leaf((long)a); }

int main(int argc, char **argv) {
	if (setjmp(env))
		return 1;
	long s = many(argc, 2, 3, 4, 5, 6) + dyn(argc * 10) + vsum(3, 1L, 2L, 3L) + mkbig(argc).a[3] +
		 rec(argc + 5) + early(argc) + (long)fp(argc, 2.5);
	if (s == 42)
		die("unlikely");
	printf("%ld\n", s);
	return 0;
}
