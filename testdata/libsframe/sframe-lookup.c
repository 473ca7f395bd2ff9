/* sframe-lookup: what GNU libsframe reads in an SFrame section.

   Usage: sframe-lookup SECTION-FILE

   SECTION-FILE holds the bytes of one SFrame section (sframe-gen --raw, or
   objcopy -O binary --only-section=.sframe).  The section is decoded with
   sframe_decode, then, for every function of its index (in index order):

     func I start S size Z fres N info 0xII info2 0xII rep R
     fre I J start A info 0xII words W...        (sframe_decoder_get_fre)
     find I PC -> fre A info 0xII words W...      (sframe_find_fre)
       cfa BASE OFF ra OFF|- fp OFF|- mangled M undefined U
     find I PC -> error E

   S and PC are offsets from the start of the section (what sframe_find_fre
   takes), in decimal; W are the raw data words (sframe_get_fre_udata, in
   hex).  The PCs looked up for function I are, for each FRE, its first
   address and the middle of its range (when inside the function), then
   the address just before the function and the one just past its end.
   After a find that succeeds, the second line interprets the FRE with
   function I's FDE type (sframe_fre_get_cfa_offset, _ra_offset,
   _fp_offset, _ra_mangled_p, _ra_undefined_p; "-" when libsframe says the
   offset is not there).

   The first line is the header:

     header version V flags 0xFF abi A fixed_fp F fixed_ra R fdes N

   Exit status: 0; 1 when the section cannot be read or decoded (the line
   "decode error E: MESSAGE" is printed); 2 for a usage error.

   It is built by the tests (cmd/sframe-gen/libsframe_test.go) with the C
   compiler against the libsframe of the GNU reference prefix; it only
   reads, so any libsframe of the same major version will do.  It also
   builds against libsframe 2.41-2.44 (SFRAME_VERSION 2, the prefix of
   testdata/gnu-old-ref.sh), which reads version 2 sections only: there the
   flags are the header's byte, the start is the stored field (relative to
   the section in the only layout 2.44 reads), the words are decoded from
   the FRE's bytes, info2 is 0 and "undefined" is 0 (2.44 knows neither).  */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe-api.h>

static char *
read_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap);
  while (buf != NULL)
    {
      if (n == cap)
	{
	  cap *= 2;
	  char *b = realloc (buf, cap);
	  if (b == NULL)
	    {
	      free (buf);
	      buf = NULL;
	      break;
	    }
	  buf = b;
	}
      size_t m = fread (buf + n, 1, cap - n, f);
      if (m == 0)
	break;
      n += m;
    }
  if (buf != NULL && ferror (f))
    {
      free (buf);
      buf = NULL;
    }
  fclose (f);
  *size = n;
  return buf;
}

#if SFRAME_VERSION == SFRAME_VERSION_2
#define OLD_LIBSFRAME 1
/* fre_udata is sframe_get_fre_udata, which libsframe 2.44 lacks: data
   word K of FRE, from its bytes (in host order once decoded).  */
static uint32_t
fre_udata (const sframe_frame_row_entry *fre, unsigned k, int *err)
{
  unsigned size = 1u << ((fre->fre_info >> 5) & 3);
  if (size > 4 || (k + 1) * size > MAX_OFFSET_BYTES)
    {
      *err = 1;
      return 0;
    }
  const unsigned char *p = fre->fre_offsets + k * size;
  if (size == 1)
    return p[0];
  if (size == 2)
    {
      uint16_t v;
      memcpy (&v, p, 2);
      return v;
    }
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}
#define sframe_get_fre_udata fre_udata
#endif

/* print_words prints the raw data words of FRE.  */
static void
print_words (const sframe_frame_row_entry *fre)
{
  unsigned count = (fre->fre_info >> 1) & 0xf;
  printf (" words");
  for (unsigned k = 0; k < count; k++)
    {
      int err = 0;
      uint32_t w = sframe_get_fre_udata (fre, k, &err);
      if (err)
	printf (" ?");
      else
	printf (" %" PRIx32, w);
    }
}

/* find looks PC up and prints what libsframe finds, interpreted with
   FDE_TYPE.  */
static void
find (const sframe_decoder_ctx *dctx, unsigned i, int64_t pc,
      uint32_t fde_type)
{
  sframe_frame_row_entry fre;
  memset (&fre, 0, sizeof fre);
#ifdef OLD_LIBSFRAME
  int err = sframe_find_fre ((sframe_decoder_ctx *) dctx, (int32_t) pc, &fre);
#else
  int err = sframe_find_fre (dctx, pc, &fre);
#endif
  if (err)
    {
      printf ("find %u %" PRId64 " -> error %d\n", i, pc, err);
      return;
    }
  printf ("find %u %" PRId64 " -> fre %" PRIu32 " info 0x%02x", i, pc,
	  fre.fre_start_addr, fre.fre_info);
  print_words (&fre);
  printf ("\n");

  int e = 0;
  uint8_t base = sframe_fre_get_base_reg_id (&fre, &e);
#ifdef OLD_LIBSFRAME
  (void) fde_type;
  sframe_decoder_ctx *dc = (sframe_decoder_ctx *) dctx;
  int32_t cfa = sframe_fre_get_cfa_offset (dc, &fre, &e);
#else
  int32_t cfa = sframe_fre_get_cfa_offset (dctx, &fre, fde_type, &e);
#endif
  printf ("  cfa %u ", base);
  if (e)
    printf ("-");
  else
    printf ("%" PRId32, cfa);
#ifdef OLD_LIBSFRAME
  e = 0;
  int32_t ra = sframe_fre_get_ra_offset (dc, &fre, &e);
#else
  int32_t ra = sframe_fre_get_ra_offset (dctx, &fre, fde_type, &e);
#endif
  if (e)
    printf (" ra -");
  else
    printf (" ra %" PRId32, ra);
#ifdef OLD_LIBSFRAME
  e = 0;
  int32_t fp = sframe_fre_get_fp_offset (dc, &fre, &e);
#else
  int32_t fp = sframe_fre_get_fp_offset (dctx, &fre, fde_type, &e);
#endif
  if (e)
    printf (" fp -");
  else
    printf (" fp %" PRId32, fp);
#ifdef OLD_LIBSFRAME
  bool mangled = sframe_fre_get_ra_mangled_p (dc, &fre, &e);
  bool undef = false;
#else
  bool mangled = sframe_fre_get_ra_mangled_p (dctx, &fre, &e);
  bool undef = sframe_fre_get_ra_undefined_p (dctx, &fre, &e);
#endif
  printf (" mangled %d undefined %d\n", mangled ? 1 : 0, undef ? 1 : 0);
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: sframe-lookup SECTION-FILE\n");
      return 2;
    }
  size_t size = 0;
  char *buf = read_file (argv[1], &size);
  if (buf == NULL)
    {
      fprintf (stderr, "sframe-lookup: %s: %s\n", argv[1], strerror (errno));
      return 1;
    }
  int err = 0;
  sframe_decoder_ctx *dctx = sframe_decode (buf, size, &err);
  if (dctx == NULL)
    {
      printf ("decode error %d: %s\n", err, sframe_errmsg (err));
      free (buf);
      return 1;
    }

  uint32_t n = sframe_decoder_get_num_fidx (dctx);
  printf ("header version %u flags 0x%02x abi %u fixed_fp %d fixed_ra %d"
	  " fdes %" PRIu32 "\n",
#ifdef OLD_LIBSFRAME
	  sframe_decoder_get_version (dctx), (unsigned char) buf[3],
#else
	  sframe_decoder_get_version (dctx), sframe_decoder_get_flags (dctx),
#endif
	  sframe_decoder_get_abi_arch (dctx),
	  sframe_decoder_get_fixed_fp_offset (dctx),
	  sframe_decoder_get_fixed_ra_offset (dctx), n);

  for (uint32_t i = 0; i < n; i++)
    {
      uint32_t nfres = 0, fsize = 0;
      int64_t start = 0;
      unsigned char info = 0, info2 = 0;
      uint8_t rep = 0;
#ifdef OLD_LIBSFRAME
      int32_t start32 = 0;
      if (sframe_decoder_get_funcdesc_v2 (dctx, i, &nfres, &fsize, &start32,
					  &info, &rep))
	{
	  printf ("func %" PRIu32 " error\n", i);
	  continue;
	}
      start = start32;
      int64_t secrel = start;
#else
      int32_t start32 = 0;
      int bad = sframe_decoder_get_version (dctx) == SFRAME_VERSION_2
	? sframe_decoder_get_funcdesc_v2 (dctx, i, &nfres, &fsize, &start32,
					  &info, &rep)
	: sframe_decoder_get_funcdesc_v3 (dctx, i, &nfres, &fsize, &start,
					  &info, &info2, &rep);
      if (sframe_decoder_get_version (dctx) == SFRAME_VERSION_2)
	start = start32;
      if (bad)
	{
	  printf ("func %" PRIu32 " error\n", i);
	  continue;
	}
      /* Section-relative, as sframe_find_fre takes PCs.  */
      int e = 0;
      int64_t secrel = start
	+ sframe_decoder_get_offsetof_fde_start_addr (dctx, i, &e);
#endif
      printf ("func %" PRIu32 " start %" PRId64 " size %" PRIu32
	      " fres %" PRIu32 " info 0x%02x info2 0x%02x rep %u\n",
	      i, secrel, fsize, nfres, info, info2, rep);

      uint32_t *starts = calloc (nfres + 1, sizeof *starts);
      if (starts == NULL)
	{
	  fprintf (stderr, "sframe-lookup: out of memory\n");
	  return 1;
	}
      for (uint32_t j = 0; j < nfres; j++)
	{
	  sframe_frame_row_entry fre;
	  memset (&fre, 0, sizeof fre);
	  if (sframe_decoder_get_fre (dctx, i, j, &fre))
	    {
	      printf ("fre %" PRIu32 " %" PRIu32 " error\n", i, j);
	      continue;
	    }
	  starts[j] = fre.fre_start_addr;
	  printf ("fre %" PRIu32 " %" PRIu32 " start %" PRIu32 " info 0x%02x",
		  i, j, fre.fre_start_addr, fre.fre_info);
	  print_words (&fre);
	  printf ("\n");
	}

      uint32_t fde_type = info2 & 0x1f;
      for (uint32_t j = 0; j < nfres; j++)
	{
	  uint32_t lo = starts[j];
	  uint32_t hi = j + 1 < nfres ? starts[j + 1] : fsize;
	  if (lo < fsize)
	    find (dctx, i, secrel + lo, fde_type);
	  if (hi > lo + 1 && lo + (hi - lo) / 2 < fsize)
	    find (dctx, i, secrel + lo + (hi - lo) / 2, fde_type);
	}
      find (dctx, i, secrel - 1, fde_type);
      find (dctx, i, secrel + fsize, fde_type);
      free (starts);
    }

  sframe_decoder_free (&dctx);
  free (buf);
  return 0;
}
