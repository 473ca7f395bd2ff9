/* drap.c: functions that make gcc realign the stack (DRAP on x86-64: CFA on
 * r10, then DW_CFA_def_cfa_expression *(rbp-8)), for testdata/regen.sh.
 * Public domain / CC0. */
#include <stdarg.h>
#include <string.h>

extern void consume(void *p, size_t n);

/* A 64-byte aligned local next to a variable-length array. */
int drap_vla(int n)
{
	double v[n > 0 ? n : 1];
	double a[8] __attribute__((aligned(64)));

	memset(a, 0, sizeof a);
	for (int i = 0; i < n; i++)
		v[i] = i;
	consume(a, sizeof a);
	consume(v, sizeof v[0] * (size_t)(n > 0 ? n : 1));
	return (int)a[3];
}

/* A 64-byte aligned local in a varargs function. */
int drap_varargs(int n, ...)
{
	char buf[256] __attribute__((aligned(64)));
	va_list ap;
	int sum = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		sum += va_arg(ap, int);
	va_end(ap);
	memset(buf, sum, sizeof buf);
	consume(buf, sizeof buf);
	return sum;
}

/* A 64-byte aligned local with alloca. */
int drap_alloca(int n)
{
	char big[128] __attribute__((aligned(64)));
	char *p = __builtin_alloca((size_t)n + 1);

	memset(p, 1, (size_t)n + 1);
	memset(big, 2, sizeof big);
	consume(big, sizeof big);
	consume(p, (size_t)n + 1);
	return big[5] + p[0];
}

/* Only an aligned local (realigned frame on rbp, no DRAP). */
int aligned_only(void)
{
	int a[16] __attribute__((aligned(64)));

	memset(a, 0, sizeof a);
	consume(a, sizeof a);
	return a[1];
}
