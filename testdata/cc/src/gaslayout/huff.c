/* huff.c: bit-stream decoding in the style of zstd: small always-inline
   helpers, loops unrolled by hand, a function compiled for another
   instruction set (target attribute on x86-64), structure copies. For
   TestGasLayoutLive. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
	uint64_t bits;
	unsigned consumed;
	const uint8_t *ptr, *start;
} BitStream;

static inline __attribute__((always_inline)) uint64_t readLE64(const void *p) {
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline __attribute__((always_inline)) unsigned look(const BitStream *b, unsigned n) {
	return (unsigned)((b->bits << (b->consumed & 63)) >> 1 >> ((63 - n) & 63));
}

static size_t decodeBody(uint8_t *dst, size_t n, BitStream *b, const uint16_t *table) {
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		dst[i] = (uint8_t)table[look(b, 11)];
		b->consumed += table[look(b, 11)] >> 8;
		dst[i + 1] = (uint8_t)table[look(b, 11)];
		b->consumed += table[look(b, 11)] >> 8;
		dst[i + 2] = (uint8_t)table[look(b, 11)];
		b->consumed += table[look(b, 11)] >> 8;
		dst[i + 3] = (uint8_t)table[look(b, 11)];
		b->consumed += table[look(b, 11)] >> 8;
		if (b->ptr > b->start + 8) {
			b->ptr -= b->consumed >> 3;
			b->consumed &= 7;
			b->bits = readLE64(b->ptr);
		}
	}
	for (; i < n; i++)
		dst[i] = (uint8_t)table[look(b, 11)];
	return i;
}

#if defined(__x86_64__)
__attribute__((target("bmi2"))) static size_t decodeBmi2(uint8_t *dst, size_t n, BitStream *b, const uint16_t *table) {
	return decodeBody(dst, n, b, table);
}
#endif

size_t decode(uint8_t *dst, size_t n, const uint8_t *src, size_t srcSize, const uint16_t *table, int bmi2) {
	BitStream b = {0, 0, src + srcSize - 8, src};
	if (srcSize < 8)
		return 0;
	b.bits = readLE64(b.ptr);
#if defined(__x86_64__)
	if (bmi2)
		return decodeBmi2(dst, n, &b, table);
#else
	(void)bmi2;
#endif
	return decodeBody(dst, n, &b, table);
}

uint32_t checksum(const uint8_t *p, size_t n) {
	uint32_t a = 1, b = 0;
	while (n) {
		size_t k = n < 5552 ? n : 5552;
		n -= k;
		while (k--) {
			a += *p++;
			b += a;
		}
		a %= 65521;
		b %= 65521;
	}
	return b << 16 | a;
}
