// Picking one ISA level's rows out of a kernel list (`*_list.inc`), so that the file compiling
// that level's kernels defines exactly its rows' functions from the list instead of naming
// them again by hand. OCTET_ROW_IF_<isa>(...) expands to nothing; the one ISA file that
// defines a level redefines its own to expand its argument, then includes the family's
// `*_define.inc` (kernels/gemm/q8_gemm_define.inc):
//
//   #undef OCTET_ROW_IF_avx2
//   #define OCTET_ROW_IF_avx2(...) __VA_ARGS__
#pragma once

#define OCTET_ROW_IF_scalar(...)
#define OCTET_ROW_IF_avx2(...)
#define OCTET_ROW_IF_avxvnni(...)
#define OCTET_ROW_IF_avx256vnni(...)
#define OCTET_ROW_IF_avx512(...)
#define OCTET_ROW_IF_avx512vnni(...)
#define OCTET_ROW_IF_avx512amx(...)
#define OCTET_ROW_IF_neon(...)
#define OCTET_ROW_IF_neondot(...)
#define OCTET_ROW_IF_neoni8mm(...)
