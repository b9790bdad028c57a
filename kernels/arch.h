#pragma once
// The architecture this translation unit is compiled for: the microkernel lists and the ISA
// probe keep one block per architecture behind these.
#if defined(__x86_64__) || defined(_M_X64)
#define OCTET_ARCH_X86 1
#define OCTET_ARCH_ARM64 0
#elif defined(__aarch64__) || defined(_M_ARM64)
#define OCTET_ARCH_X86 0
#define OCTET_ARCH_ARM64 1
#else
#define OCTET_ARCH_X86 0
#define OCTET_ARCH_ARM64 0
#endif
