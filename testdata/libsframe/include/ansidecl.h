/* The two macros of libiberty's ansidecl.h that sframe.h and sframe-api.h
   use, so that sframe-lookup.c builds without libiberty's headers (the
   reference prefix installs libsframe's headers, not libiberty's).  */
#ifndef SFRAME_LOOKUP_ANSIDECL_H
#define SFRAME_LOOKUP_ANSIDECL_H
#ifndef ATTRIBUTE_PACKED
#define ATTRIBUTE_PACKED __attribute__ ((packed))
#endif
#ifndef ATTRIBUTE_UNUSED
#define ATTRIBUTE_UNUSED __attribute__ ((__unused__))
#endif
#endif
