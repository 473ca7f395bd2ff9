/* unused.c: linked only into gc[.gs].exe; demo_unused is not called, so
 * --gc-sections drops it together with its FDE (testdata/regen.sh).
 * Public domain / CC0. */
#include <stdio.h>
#include <string.h>

int demo_unused(int x)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%d", x);
	return (int)strlen(buf);
}

/* Also unreferenced: dropped too. */
int demo_unused2(int x)
{
	return x * 3 + 1;
}
