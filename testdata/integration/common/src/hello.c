/* A tiny program for the integration fixtures: calls into a shared library. */
#include <stdio.h>
int greet(const char *who);
int main(void) { return greet("sframe") == 6 ? 0 : 1; }
